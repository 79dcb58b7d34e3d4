export { FakePve } from './fake-pve.js'
export type { FakeGuest, FakeStorage, FakeCall, FaultHook, TaskFaultHook, FakePveOptions } from './fake-pve.js'
