// Where virt-operator puts virt-api, and so where the aggregator looks for subresources.kubevirt.io:
// the Service `virt-api` in namespace `kubevirt` (KubeVirt v1.9.0
// pkg/virt-operator/resource/generate/components/webhooks.go VirtApiServiceName, apiservices.go), one
// APIService per version of the group (staging/src/kubevirt.io/api/core/v1/register.go
// SubresourceGroupVersions: v1 first, the preferred one, then v1alpha3).
export const virtApiService = { namespace: "kubevirt", name: "virt-api" };

export const subresourceVersions = ["v1", "v1alpha3"];

/**
 * The name kube-aggregator checks the serving certificate against: `<service>.<namespace>.svc`
 * (k8s.io/kube-aggregator v0.34.3 pkg/apiserver/handler_proxy.go, updateAPIService's ServerName).
 */
export const aggregatorServerName = `${virtApiService.name}.${virtApiService.namespace}.svc`;

/**
 * The serving certificate's names, as virt-operator makes them for virt-api (pkg/certificates/triple
 * NewServerKeyPair): the Service's short, namespaced, .svc and cluster-domain names.
 */
export const virtApiServingNames = [
  virtApiService.name,
  `${virtApiService.name}.${virtApiService.namespace}`,
  aggregatorServerName,
  `${aggregatorServerName}.cluster.local`,
];
