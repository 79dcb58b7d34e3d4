/**
 * Where a VM manifest's cloud-init and CD drives live: the schema refuses a declared disk on these slots, the
 * planner writes and adopts the drives there.
 */

/** The slot of the manifest's cloud-init drive (`spec.hardware.cloud-init`). */
export const CLOUD_INIT_SLOT = 'ide2'

/** The slot of the manifest's CD drive (`spec.hardware.cdrom`): ide2, or ide3 when the cloud-init drive has ide2. */
export const cdSlot = (cloudInit: boolean): 'ide2' | 'ide3' => (cloudInit ? 'ide3' : 'ide2')
