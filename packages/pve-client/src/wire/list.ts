/**
 * PVE's lists in one string (tags, a `delete` list, `hotplug`, HA node priorities, vzdump's `vmid`): the items
 * are separated by `,`, `;` or whitespace, empty items dropped, as PVE::Tools::split_list reads them.
 */
export function splitList(input: string | undefined | null): string[] {
  if (typeof input !== 'string') return []
  return input.split(/[,;\s]+/).filter((item) => item !== '')
}
