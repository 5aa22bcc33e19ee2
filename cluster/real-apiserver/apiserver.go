package main

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/cli/globalflag"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// serviceCIDR is the Services' range; its first address (10.0.0.1) is the kubernetes Service, named in
// the serving certificate.
const serviceCIDR = "10.0.0.0/24"

// The issuer written into service-account tokens, as on a kubeadm cluster.
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// apiserverArgs are kube-apiserver's command-line flags, as an operator would pass them, so that
// `kube-apiserver --help` documents each one and the same validation applies.
func apiserverArgs(p *pki, etcdURL string, verbosity int) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--tls-cert-file=" + p.servingCertFile,
		"--tls-private-key-file=" + p.servingKeyFile,
		"--client-ca-file=" + p.caFile,
		"--service-cluster-ip-range=" + serviceCIDR,
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-signing-key-file=" + p.serviceAccountKeyFile,
		"--service-account-key-file=" + p.serviceAccountKeyFile,
		"--authorization-mode=Node,RBAC",
		// The defaults plus the two a hardened cluster adds. OwnerReferencesPermissionEnforcement: only
		// who may delete an object may make it an owner (docs/deploy.md relies on it for the user-data
		// Secrets); NodeRestriction: kubelets touch only their own node.
		"--enable-admission-plugins=NodeRestriction,OwnerReferencesPermissionEnforcement",
		// virt-launcher pods are privileged.
		"--allow-privileged=true",
		// Kubelets (the emulator's nodes) for pod logs: kubeadm's address order, and a client certificate
		// they check. Their serving certificates are not checked, as without kubeadm's optional
		// --kubelet-certificate-authority.
		"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
		"--kubelet-client-certificate=" + p.kubeletClientCertFile,
		"--kubelet-client-key=" + p.kubeletClientKeyFile,
		// The aggregation layer, for KubeVirt's subresources.kubevirt.io served by an aggregated server.
		"--requestheader-client-ca-file=" + p.frontProxyCAFile,
		"--requestheader-allowed-names=" + frontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p.proxyClientCertFile,
		"--proxy-client-key-file=" + p.proxyClientKeyFile,
		// The kubernetes Service's endpoints would be this loopback address, which the API refuses; with no
		// pods and no kube-proxy here, nothing needs them.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		fmt.Sprintf("--v=%d", verbosity),
	}
}

// runAPIServer runs kube-apiserver in this process until ctx ends, serving on listener. It does what
// kube-apiserver's own command does (app.NewAPIServerCommand) minus the process-wide signal handler,
// which would exit the process before etcd and the data folder are cleaned up.
func runAPIServer(ctx context.Context, listener net.Listener, args []string) error {
	s := options.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	named := s.Flags()
	globalflag.AddGlobalFlags(named.FlagSet("global"), "kube-apiserver", logs.SkipLoggingConfigurationFlags())
	for _, set := range named.FlagSets {
		fs.AddFlagSet(set)
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("kube-apiserver flags %s: %w", strings.Join(args, " "), err)
	}
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return err
	}
	featureGate := s.GenericServerRunOptions.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	if err := logsapi.ValidateAndApply(s.Logs, featureGate); err != nil {
		return err
	}
	// The API server's own loopback clients would log the warnings it sends itself.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})

	// Serve on the listener this program already holds, so a port taken meanwhile cannot slip in.
	s.SecureServing.Listener = listener
	s.SecureServing.BindPort = listener.Addr().(*net.TCPAddr).Port

	completed, err := s.Complete(ctx)
	if err != nil {
		return err
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return utilerrors.NewAggregate(errs)
	}
	return app.Run(ctx, completed)
}
