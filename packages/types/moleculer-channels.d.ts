declare module '@moleculer/channels/src/index' {
  const ChannelsMiddleware: (opts: Record<string, unknown>) => any;
  export default ChannelsMiddleware;
}
declare module '@moleculer/channels/src/adapters/base';
