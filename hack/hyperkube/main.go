// Command hyperkube is a multi-call binary holding the Kubernetes components
// the local cluster runs. Call it as "hyperkube <component> [flags]" or
// through a symlink named after the component. One component per process:
// the components keep global flag and version registries.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

const usage = "usage: hyperkube <kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy|kubectl|etcd> [flags]"

func main() {
	name, args := filepath.Base(os.Args[0]), os.Args[1:]
	if name == "hyperkube" {
		if len(args) == 0 {
			fmt.Fprintln(os.Stderr, usage)
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	var cmd *cobra.Command
	switch name {
	case "kube-apiserver":
		cmd = apiserver.NewAPIServerCommand()
	case "kube-controller-manager":
		cmd = kcm.NewControllerManagerCommand()
	case "kube-scheduler":
		cmd = scheduler.NewSchedulerCommand()
	case "kubelet":
		cmd = kubelet.NewKubeletCommand()
	case "kube-proxy":
		cmd = proxy.NewProxyCommand()
	case "kubectl":
		cmd = kubectlcmd.NewDefaultKubectlCommand()
	case "etcd":
		etcdmain.Main(append([]string{"etcd"}, args...))
		return
	default:
		fmt.Fprintf(os.Stderr, "unknown component %q\n%s\n", name, usage)
		os.Exit(2)
	}
	cmd.SetArgs(args)
	os.Exit(cli.Run(cmd))
}
