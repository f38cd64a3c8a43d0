/** The call table lives in packages/call-table (the bus permissions are generated from it); re-exported for the architecture tests. */
export { ALLOWED_CALLS, CALLS, CONSUMES, forbiddenCalls, LAYERS, type ServiceName } from '../../packages/call-table';
