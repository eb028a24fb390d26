// The Helm chart in deploy/helm, checked without a cluster: rendered with helm (npm run helm), every object validated
// against the Kubernetes API schemas (kubernetes-models), and the settings it gives each process checked against that
// process's own configuration schema, port and probe endpoints.
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { baseEnvSchema, shutdownSettings } from '@ordergraph/core';
import { SUBGRAPH_URL_VARIABLE, gatewayEnvSchema, loadGatewayConfig } from '@ordergraph/gateway/config';
import { catalogEnvSchema, loadCatalogConfig } from '@ordergraph/catalog/config';
import { loadOrdersConfig, ordersEnvSchema } from '@ordergraph/orders/config';
import { loadUsersConfig, usersEnvSchema } from '@ordergraph/users/config';
import { helm } from '../scripts/helm.js';
import { startSupergraph } from '@ordergraph/testkit/e2e';

const CHART = 'deploy/helm/ordergraph';

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  [field: string]: unknown;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}
interface Container {
  name: string;
  ports: { name: string; containerPort: number }[];
  env: EnvVar[];
  envFrom: { configMapRef: { name: string } }[];
  startupProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  lifecycle: { preStop: { sleep: { seconds: number } } };
  resources: { requests: object; limits: object };
  securityContext: { readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean };
  volumeMounts: { name: string; mountPath: string }[];
}
interface PodSpec {
  terminationGracePeriodSeconds: number;
  securityContext: { runAsNonRoot: boolean };
  containers: Container[];
  volumes: { name: string; configMap?: { name: string } }[];
}

const REQUIRED = [
  '--set', 'secrets.jwtSecret=a-production-secret-of-at-least-32-chars',
  '--set', 'secrets.subgraphSigningSecret=a-signing-secret-of-at-least-32-characters',
  '--set', 'secrets.redisPassword=redis-password',
  '--set', 'secrets.mongoUrls.users=mongodb://mongo-0.mongo:27017/?replicaSet=rs0',
  '--set', 'secrets.mongoUrls.orders=mongodb://mongo-0.mongo:27017/?replicaSet=rs0',
  '--set', 'secrets.mongoUrls.catalog=mongodb://mongo-0.mongo:27017/?replicaSet=rs0',
];

/** Values of required Secret keys, for a rendering that names an existing Secret. */
const STAND_INS: Record<string, string> = {
  MONGO_URL: 'mongodb://mongo-0.mongo:27017/?replicaSet=rs0',
  SUBGRAPH_SIGNING_SECRET: 'a-signing-secret-of-at-least-32-characters',
};

const render = (args: string[]): K8sObject[] =>
  parseAllDocuments(helm(['template', 'og', CHART, ...args]))
    .map((document) => document.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);

/** Validates `object` against the schema of its apiVersion and kind; throws on any violation. */
async function validate(object: K8sObject): Promise<void> {
  const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : [undefined, object.apiVersion];
  const module = (await import(/* @vite-ignore */ `kubernetes-models/${group ? `${group}/` : ''}${version}/${object.kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = module[object.kind];
  if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new Model(object).validate();
}

const processes = {
  gateway: { schema: gatewayEnvSchema, port: loadGatewayConfig({}).PORT },
  users: { schema: usersEnvSchema, port: loadUsersConfig({}).PORT },
  orders: { schema: ordersEnvSchema, port: loadOrdersConfig({}).PORT },
  catalog: { schema: catalogEnvSchema, port: loadCatalogConfig({}).PORT },
};

const renderings = {
  'a Secret of its own, Redis Sentinel, the supergraph in a ConfigMap': [
    ...REQUIRED,
    '--set', 'redis.sentinels=sentinel-0:26379\\,sentinel-1:26379\\,sentinel-2:26379',
    '--set', 'redis.sentinelMaster=ordergraph',
    '--set-file', 'supergraph.sdl=supergraph.graphql',
  ],
  'an existing Secret, a JWKS, Redis Cluster, no autoscaling': [
    '--set', 'secrets.existingSecret=ordergraph-prod',
    '--set', 'auth.jwksUrl=https://id.example.com/.well-known/jwks.json',
    '--set', 'redis.clusterNodes=redis-0:6379\\,redis-1:6379\\,redis-2:6379',
    '--set', 'redis.tls=true',
    '--set', 'gateway.autoscaling.enabled=false',
    '--set', 'tracing.otlpEndpoint=http://otel-collector.observability:4318',
    '--set', 'tracing.protocol=http/json',
    '--set', 'tracing.sampler=parentbased_traceidratio',
    '--set', 'tracing.samplerArg=0.25',
    '--set', 'tracing.resourceAttributes=deployment.environment=production\\,service.namespace=ordergraph',
  ],
};

describe('the schema check itself', () => {
  it('rejects an object that breaks its schema', async () => {
    await expect(validate({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { replicas: 'two' } })).rejects.toThrow();
  });
});

describe.each(Object.entries(renderings))('the chart rendered with %s', (_title, args) => {
  const objects = render(args);
  const byKind = (kind: string) => objects.filter((object) => object.kind === kind);
  const deployments = byKind('Deployment') as (K8sObject & { spec: { replicas?: number; template: { spec: PodSpec } } })[];
  const configMaps = new Map(byKind('ConfigMap').map((object) => [object.metadata.name, (object as K8sObject & { data: Record<string, string> }).data]));
  const secret = byKind('Secret')[0] as (K8sObject & { stringData: Record<string, string> }) | undefined;
  // How every process drains, read as runProcess reads it from the settings every process gets.
  const shutdown = shutdownSettings(baseEnvSchema.parse(configMaps.get('og-config')));

  it('renders only objects that are valid against the Kubernetes API schemas', async () => {
    expect(objects.length).toBeGreaterThanOrEqual(10);
    for (const object of objects) await validate(object);
  });

  it('has a Deployment and a Service for the gateway and each subgraph, the gateway with a PodDisruptionBudget', () => {
    const names = (kind: string) => byKind(kind).map((object) => object.metadata.name).sort();
    expect(names('Deployment')).toEqual(['og-catalog', 'og-gateway', 'og-orders', 'og-users']);
    expect(names('Service')).toEqual(['og-catalog', 'og-gateway', 'og-orders', 'og-users']);
    expect(names('PodDisruptionBudget')).toEqual(['og-gateway']);
  });

  it.each(Object.entries(processes))('gives %s only settings its configuration schema knows, and its own port', (name, { schema, port }) => {
    const deployment = deployments.find((object) => object.metadata.name === `og-${name}`)!;
    const [container] = deployment.spec.template.spec.containers;
    // The gateway reads a SUBGRAPH_<NAME>_URL for each subgraph of the supergraph it serves, by pattern.
    const known = (variable: string) => variable in schema.shape || (name === 'gateway' && SUBGRAPH_URL_VARIABLE.test(variable));
    const fromConfigMaps = container!.envFrom.flatMap(({ configMapRef }) => Object.entries(configMaps.get(configMapRef.name)!));
    const names = [...fromConfigMaps.map(([variable]) => variable), ...container!.env.map((variable) => variable.name)];
    expect(names.filter((variable) => !known(variable))).toEqual([]);
    expect(container!.ports).toEqual([{ name: 'http', containerPort: port, protocol: 'TCP' }]);
    expect(container!.env.find((variable) => variable.name === 'PORT')?.value).toBe(String(port));
    // The configuration the pod gets is one the process accepts. A key of a Secret the chart does not render (an
    // existing one) stands in as the process requires it; an optional key is taken as absent, as the kubelet would.
    const secretValue = ({ name: variable, valueFrom }: EnvVar) => {
      const reference = valueFrom!.secretKeyRef!;
      return secret?.stringData[reference.key] ?? (reference.optional ? undefined : STAND_INS[variable]);
    };
    const env = Object.fromEntries([
      ...fromConfigMaps,
      ...container!.env.map((variable) => [variable.name, variable.value ?? secretValue(variable)]).filter(([, value]) => value !== undefined),
    ]);
    expect(() => schema.parse(env)).not.toThrow();
    if (name === 'gateway') expect(() => loadGatewayConfig(env)).not.toThrow();
  });

  it('probes the real endpoints on the named port and stops within the drain budget', () => {
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      expect(container!.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container!.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container!.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      // preStop, then SIGTERM, after which the process exits by its own deadline: the kubelet must not kill it sooner,
      // nor wait much past it.
      const preStopMs = container!.lifecycle.preStop.sleep.seconds * 1000;
      expect(preStopMs).toBeGreaterThan(0);
      const graceMs = pod.terminationGracePeriodSeconds * 1000;
      expect(graceMs).toBeGreaterThan(preStopMs + shutdown.hardTimeoutMs);
      expect(graceMs).toBeLessThanOrEqual(preStopMs + shutdown.hardTimeoutMs + 6_000);
    }
  });

  it('waits once before closing the listener: the preStop sleep, with no SHUTDOWN_DELAY of the process on top', () => {
    // The processes run in production mode, where SHUTDOWN_DELAY defaults to 5 s: the chart must set it to 0.
    expect(configMaps.get('og-config')).toMatchObject({ NODE_ENV: 'production', SHUTDOWN_DELAY: '0' });
    expect(shutdown.delayMs).toBe(0);
    // The deadline leaves the drain its time (shutdownSettings refuses anything else at start).
    expect(shutdown.hardTimeoutMs).toBeGreaterThan(shutdown.drainTimeoutMs);
  });

  it('runs as non-root on a read-only filesystem with resource requests and limits', () => {
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(container!.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(container!.resources.requests).toBeDefined();
      expect(container!.resources.limits).toBeDefined();
    }
  });

  it('gives the gateway and every subgraph the same signing secret, which none may start without', () => {
    for (const deployment of deployments) {
      const [container] = deployment.spec.template.spec.containers;
      const signing = container!.env.find((variable) => variable.name === 'SUBGRAPH_SIGNING_SECRET');
      expect(signing?.valueFrom?.secretKeyRef, deployment.metadata.name).toMatchObject({ key: 'SUBGRAPH_SIGNING_SECRET' });
      expect(signing!.valueFrom!.secretKeyRef!.optional ?? false).toBe(false);
    }
  });

  it('points each process at Services that exist, on their ports, and at Secret keys that exist', () => {
    const services = new Map(byKind('Service').map((object) => [object.metadata.name, object as K8sObject & { spec: { ports: { port: number; targetPort: string }[] } }]));
    for (const deployment of deployments) {
      const [container] = deployment.spec.template.spec.containers;
      expect(services.get(deployment.metadata.name)?.spec.ports).toEqual([
        { name: 'http', port: container!.ports[0]!.containerPort, targetPort: 'http', protocol: 'TCP' },
      ]);
      for (const variable of container!.env) {
        if (variable.value?.startsWith('http://og-')) {
          const url = new URL(variable.value);
          expect(services.get(url.hostname)?.spec.ports[0]?.port).toBe(Number(url.port));
          expect(url.pathname).toBe('/graphql');
        }
        const reference = variable.valueFrom?.secretKeyRef;
        if (reference && secret && !reference.optional) expect(Object.keys(secret.stringData)).toContain(reference.key);
      }
    }
  });
});

describe('the supergraph ConfigMap', () => {
  it('is mounted as a directory where SUPERGRAPH_PATH points, so a published supergraph is picked up without a restart', () => {
    const objects = render([...REQUIRED, '--set-file', 'supergraph.sdl=supergraph.graphql']);
    const gateway = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'og-gateway') as unknown as {
      spec: { template: { spec: PodSpec } };
    };
    const pod = gateway.spec.template.spec;
    const path = pod.containers[0]!.env.find((variable) => variable.name === 'SUPERGRAPH_PATH')!.value!;
    const mount = pod.containers[0]!.volumeMounts.find((volume) => path.startsWith(`${volume.mountPath}/`))!;
    const volume = pod.volumes.find((candidate) => candidate.name === mount.name)!;
    const configMap = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === volume.configMap?.name) as unknown as { data: Record<string, string> };
    expect(configMap.data[path.slice(mount.mountPath.length + 1)]).toContain('@link(url: "https://specs.apollo.dev/join');
  });

  it('refuses to render without the secrets it needs', () => {
    expect(() => render([])).toThrow(/secrets.jwtSecret/);
    const withoutSigning = REQUIRED.filter((arg, i) => !arg.startsWith('secrets.subgraphSigningSecret') && !REQUIRED[i + 1]?.startsWith('secrets.subgraphSigningSecret'));
    expect(withoutSigning).toHaveLength(REQUIRED.length - 2);
    expect(() => render(withoutSigning)).toThrow(/secrets.subgraphSigningSecret/);
  });
});

describe('the probe paths', () => {
  it('answer 200 on every process once it is up', async () => {
    const supergraph = await startSupergraph();
    try {
      const objects = render(REQUIRED);
      const deployments = objects.filter((object) => object.kind === 'Deployment') as unknown as { metadata: { name: string }; spec: { template: { spec: PodSpec } } }[];
      const urls = { gateway: supergraph.url, ...supergraph.subgraphs };
      for (const deployment of deployments) {
        const base = urls[deployment.metadata.name.slice('og-'.length) as keyof typeof urls].replace('/graphql', '');
        const container = deployment.spec.template.spec.containers[0]!;
        for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
          expect((await fetch(base + probe.httpGet.path)).status, `${deployment.metadata.name} ${probe.httpGet.path}`).toBe(200);
        }
      }
    } finally {
      await supergraph.stop();
    }
  });
});
