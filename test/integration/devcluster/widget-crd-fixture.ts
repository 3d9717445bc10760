/**
 * Small CRD fixtures for the dev cluster tests: `widgets.example.com` (namespaced; versions v1
 * (storage) and v1beta1 with different schemas; status + scale subresources; printer columns;
 * defaults; preserve-unknown-fields) and `gadgets.example.com` (cluster-scoped, no subresources).
 */

export function widgetCrd(overrides: { v1beta1Storage?: boolean; v1Schema?: Record<string, unknown> } = {}): Record<string, any> {
  const status = { type: 'object', properties: { replicas: { type: 'integer' }, phase: { type: 'string' }, selector: { type: 'string' } } };
  const v1Spec = {
    type: 'object',
    required: ['image'],
    properties: {
      image: { type: 'string', minLength: 1 },
      replicas: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
      mode: { type: 'string', enum: ['batch', 'streaming'] },
      extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      config: { type: 'object', additionalProperties: { type: 'string' } },
      port: { 'x-kubernetes-int-or-string': true },
    },
  };
  const v1beta1Spec = {
    type: 'object',
    properties: {
      image: { type: 'string' },
      replicas: { type: 'integer', default: 2 },
      legacyField: { type: 'string' },
    },
  };
  const columns = [
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ];
  const subresources = {
    status: {},
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: !overrides.v1beta1Storage,
          schema: { openAPIV3Schema: overrides.v1Schema ?? { type: 'object', properties: { spec: v1Spec, status } } },
          subresources,
          additionalPrinterColumns: columns,
        },
        {
          name: 'v1beta1',
          served: true,
          storage: !!overrides.v1beta1Storage,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: v1beta1Spec, status } } },
          subresources,
          additionalPrinterColumns: columns,
        },
      ],
    },
  };
}

export function gadgetCrd(): Record<string, any> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Cluster',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
        },
      ],
    },
  };
}

export function widget(name: string, spec: Record<string, unknown> = { image: 'flink:2.2' }, version = 'v1'): Record<string, any> {
  return { apiVersion: `example.com/${version}`, kind: 'Widget', metadata: { name }, spec };
}
