/**
 * The NATS server's users and permissions, generated from the call table (never written by hand):
 * `npm run bus:config` writes deploy/nats/auth.conf; `npm run cluster` and the tests generate their own
 * for their namespace. One user per service; its password is an environment-variable reference
 * ($NATS_PASSWORD_<SERVICE>) that nats-server resolves from its own environment, so no secret is in the file.
 *
 * Moleculer subjects (prefix MOL-<namespace>), as the bus-auth transporter writes them
 * (packages/broker/nats-transporter.ts): every packet's subject ends with its sender's service, and the
 * server lets each user publish only subjects that end with its own name; receivers drop a packet whose
 * sender field names another service. Node IDs are "<service>.<host>-<pid>-<rand>" (two tokens).
 *   broadcasts      INFO.<S>, DISCOVER.<S>, HEARTBEAT.<S>, DISCONNECT.<S>    (S: the sender's service)
 *   a request       REQ.<callee node>.<action>.<S>   — only the actions of S's row of the call table
 *   replies         RES.<caller node>.<S>, INFO.<caller node>.<S>, PONG.<caller node>.<S> — to S's callers only
 *   a discovery     DISCOVER.<callee node>.<S>        — to S's callees only
 * A service subscribes to the broadcasts (INFO and HEARTBEAT only if it calls someone) and to the
 * subjects addressed to its own nodes. A service that calls nobody never hears other nodes' INFO: a broker
 * with its credentials cannot even discover other services' actions. (Moleculer's internal $node.* actions
 * are in nobody's row.)
 *
 * JetStream (packages/broker/durable.ts): every user may look up and create the namespace's two streams
 * (no delete or purge; only STREAM_ADMIN_SERVICE may update them, to raise their replicas — ADR 0036); it publishes only the durable topics it owns, and, for each
 * topic it consumes, uses only its own durable consumer's API subjects (created only with that topic as
 * its filter: CONSUMER.CREATE.<stream>.<consumer>.<filter>), acks, and the topic's dead-letter subject. Replies come to a per-user inbox prefix (_INBOX_<service>), the only inbox it may subscribe to.
 */
import { randomBytes } from 'node:crypto';
import { ALLOWED_CALLS, CALLS, callersOf, DURABLE_CONSUMES, DURABLE_PUBLISHES, LAYERS, serviceOfAction, type ServiceName } from './index';

export const DEFAULT_NAMESPACE = 'agent-market';

/**
 * The one bus user allowed to update the two streams: at its start it raises a stream created with fewer
 * replicas than wanted (an upgraded deployment). The ledger, which owns the money the events move; the others
 * only look streams up and create them, so a leaked credential cannot shorten retention or re-point subjects.
 */
export const STREAM_ADMIN_SERVICE: ServiceName = 'ledger';

/** JetStream names allow neither dots nor wildcards (same rule as packages/broker/durable.ts). */
export function jetStreamName(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** The inbox prefix a service's NATS connections use, so its replies can be scoped to it. */
export function inboxPrefixFor(user: string): string {
  return `_INBOX_${user}`;
}

/** The environment variable nats-server reads a service's password from. */
export function passwordEnvVar(service: string): string {
  return `NATS_PASSWORD_${service.toUpperCase()}`;
}

/**
 * A password nats-server can take from an environment variable: it parses the variable's value as a
 * config token, so it must start with a letter and hold only letters and digits (a leading digit would
 * be read as a number).
 */
export function natsPassword(): string {
  return `p${randomBytes(24).toString('hex')}`;
}

/** The durable consumer name of a (group, topic) pair, as durable.ts names it. */
export function durableConsumerName(group: string, topic: string): string {
  return jetStreamName(`${group}--${topic}`);
}

export interface UserPermissions {
  user: ServiceName;
  publish: string[];
  subscribe: string[];
}

export function permissionsFor(service: ServiceName, namespace = DEFAULT_NAMESPACE): UserPermissions {
  const p = `MOL-${namespace}`;
  const ns = jetStreamName(namespace);
  const streams = [`${ns}_EVENTS`, `${ns}_DEAD_LETTER`];
  const callees = ALLOWED_CALLS[service];
  const callers = callersOf(service);
  const isCaller = callees.length > 0;
  // A node ID is two tokens: its service and one more.
  const nodesOf = (s: ServiceName) => `${s}.*`;

  const publish = [
    ...['INFO', 'DISCOVER', 'HEARTBEAT', 'DISCONNECT'].map((cmd) => `${p}.${cmd}.${service}`),
    ...CALLS[service].map((action) => `${p}.REQ.${nodesOf(serviceOfAction(action)!)}.${action}.${service}`),
    ...callees.map((c) => `${p}.DISCOVER.${nodesOf(c)}.${service}`),
    ...callers.flatMap((c) => ['RES', 'INFO', 'PONG'].map((cmd) => `${p}.${cmd}.${nodesOf(c)}.${service}`)),
    // JetStream: account info, the two streams (look up / create), own topics, own consumers.
    '$JS.API.INFO',
    ...streams.flatMap((s) => [`$JS.API.STREAM.INFO.${s}`, `$JS.API.STREAM.CREATE.${s}`]),
    ...(service === STREAM_ADMIN_SERVICE ? streams.map((s) => `$JS.API.STREAM.UPDATE.${s}`) : []),
    ...DURABLE_PUBLISHES[service].map((t) => `${ns}.events.${t}`),
    ...DURABLE_CONSUMES[service].flatMap((t) => {
      const d = durableConsumerName(service, t);
      const s = streams[0];
      return [
        `$JS.API.CONSUMER.INFO.${s}.${d}`,
        // Created (or updated) only with its own filter: the server takes the filter from this subject and
        // refuses a config whose filter differs, so a service cannot widen its consumer to other topics.
        `$JS.API.CONSUMER.CREATE.${s}.${d}.${ns}.events.${t}`,
        `$JS.API.CONSUMER.MSG.NEXT.${s}.${d}`,
        `$JS.ACK.${s}.${d}.>`,
        `${ns}.dead.${t}`,
      ];
    }),
  ];
  const own = nodesOf(service);
  const subscribe = [
    `${p}.DISCOVER.*`,
    `${p}.DISCOVER.${own}.*`,
    `${p}.PING.*`,
    `${p}.PING.${own}.*`,
    `${p}.REQ.${own}.>`,
    `${p}.EVENT.${own}.>`,
    ...(isCaller
      ? [`${p}.INFO.*`, `${p}.INFO.${own}.*`, `${p}.HEARTBEAT.*`, `${p}.DISCONNECT.*`, `${p}.RES.${own}.*`, `${p}.PONG.${own}.*`]
      : []),
    `${inboxPrefixFor(service)}.>`,
  ];
  return { user: service, publish, subscribe };
}

function list(items: string[], indent: string): string {
  return `[\n${items.map((s) => `${indent}  ${JSON.stringify(s)}`).join('\n')}\n${indent}]`;
}

/**
 * The `authorization { users = [...] }` block for nats-server. Include it from the main config
 * (`include ./auth.conf`); every $NATS_PASSWORD_<SERVICE> must be set in nats-server's environment.
 */
export function natsAuthConfig(namespace = DEFAULT_NAMESPACE): string {
  const users = LAYERS.map((service) => {
    const perm = permissionsFor(service, namespace);
    return [
      `    {`,
      `      user: ${JSON.stringify(service)}`,
      `      password: $${passwordEnvVar(service)}`,
      `      permissions: {`,
      `        publish: { allow: ${list(perm.publish, '          ')} }`,
      `        subscribe: { allow: ${list(perm.subscribe, '          ')} }`,
      `      }`,
      `    }`,
    ].join('\n');
  });
  return [
    `# GENERATED by \`npm run bus:config\` from packages/call-table (the call table) and the services' contracts.`,
    `# Do not edit: change the table and run the command again. Namespace: ${namespace}.`,
    `# Passwords are environment variables of nats-server (${LAYERS.map(passwordEnvVar).join(', ')}): letters and digits, starting with a letter.`,
    `authorization {`,
    `  timeout: 2`,
    `  users = [`,
    users.join('\n'),
    `  ]`,
    `}`,
    ``,
  ].join('\n');
}
