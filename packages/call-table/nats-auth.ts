/**
 * The NATS server's users and permissions, generated from the call table (never written by hand):
 * `npm run bus:config` writes deploy/nats/auth.conf; `npm run cluster` and the tests generate their own
 * for their namespace. One user per service; its password is an environment-variable reference
 * ($NATS_PASSWORD_<SERVICE>) that nats-server resolves from its own environment, so no secret is in the file.
 *
 * Moleculer subjects (prefix MOL-<namespace>; Moleculer's own balancer picks the replica and sends the request
 * to REQ.<nodeID>; node IDs are "<service>.<host>-<pid>-<rand>", so REQ.<nodeID> is REQ.<service>.…):
 *   every node    publishes INFO, INFO.>, DISCOVER, DISCOVER.>, HEARTBEAT, DISCONNECT, PONG.>;
 *                 subscribes DISCOVER, DISCOVER.<self>.>, PING, PING.<self>.>, REQ.<self>.>, EVENT.<self>.>
 *   a caller      also subscribes INFO, INFO.<self>.>, HEARTBEAT, DISCONNECT, RES.<self>.>, PONG.<self>.>
 *                 and publishes REQ.<callee>.> for each callee of its row only. (Moleculer's internal
 *                 $node.* actions travel on the same subjects; a node answers them only from itself:
 *                 LocalInternalActionsMiddleware in packages/broker.)
 *   a callee      publishes RES.<caller>.> for each service whose row names it.
 * A service that calls nobody never hears other nodes' INFO: a broker with its credentials cannot even
 * discover other services' actions.
 *
 * JetStream (packages/broker/durable.ts): every user may look up and create the namespace's two streams
 * (fixed config; no update, delete or purge); it publishes only the durable topics it owns, and, for each
 * topic it consumes, uses only its own durable consumer's API subjects, acks, and the topic's dead-letter
 * subject. Replies come to a per-user inbox prefix (_INBOX_<service>), the only inbox it may subscribe to.
 */
import { randomBytes } from 'node:crypto';
import { ALLOWED_CALLS, DURABLE_CONSUMES, DURABLE_PUBLISHES, LAYERS, type ServiceName } from './index';

export const DEFAULT_NAMESPACE = 'agent-market';

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
  const callers = LAYERS.filter((c) => ALLOWED_CALLS[c].includes(service));
  const isCaller = callees.length > 0;

  const publish = [
    `${p}.INFO`,
    `${p}.INFO.>`,
    `${p}.DISCOVER`,
    `${p}.DISCOVER.>`,
    `${p}.HEARTBEAT`,
    `${p}.DISCONNECT`,
    `${p}.PONG.>`,
    ...callees.map((c) => `${p}.REQ.${c}.>`),
    ...callers.map((c) => `${p}.RES.${c}.>`),
    // JetStream: account info, the two streams (look up / create), own topics, own consumers.
    '$JS.API.INFO',
    ...streams.flatMap((s) => [`$JS.API.STREAM.INFO.${s}`, `$JS.API.STREAM.CREATE.${s}`]),
    ...DURABLE_PUBLISHES[service].map((t) => `${ns}.events.${t}`),
    ...DURABLE_CONSUMES[service].flatMap((t) => {
      const d = durableConsumerName(service, t);
      const s = streams[0];
      return [
        `$JS.API.CONSUMER.INFO.${s}.${d}`,
        `$JS.API.CONSUMER.CREATE.${s}.${d}`,
        `$JS.API.CONSUMER.CREATE.${s}.${d}.>`,
        `$JS.API.CONSUMER.DURABLE.CREATE.${s}.${d}`,
        `$JS.API.CONSUMER.MSG.NEXT.${s}.${d}`,
        `$JS.ACK.${s}.${d}.>`,
        `${ns}.dead.${t}`,
      ];
    }),
  ];
  const subscribe = [
    `${p}.DISCOVER`,
    `${p}.DISCOVER.${service}.>`,
    `${p}.PING`,
    `${p}.PING.${service}.>`,
    `${p}.REQ.${service}.>`,
    `${p}.EVENT.${service}.>`,
    ...(isCaller
      ? [`${p}.INFO`, `${p}.INFO.${service}.>`, `${p}.HEARTBEAT`, `${p}.DISCONNECT`, `${p}.RES.${service}.>`, `${p}.PONG.${service}.>`]
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
