// CoreDNS with only the plugins the local cluster's Corefile uses (hack/cluster/configs.sh:
// bind, ready, errors, cache, kubernetes), so that a cold build compiles none of the cloud
// providers, tracers and secret stores the upstream binary links in. This is CoreDNS's own way
// to choose plugins without a fork: import them, list their directives in chain order, and run
// coremain (https://coredns.io/2017/07/25/compile-time-enabling-or-disabling-plugins/).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

// The directives in the order of upstream's plugin.cfg, which is the order a query passes
// through them.
var directives = []string{"bind", "ready", "errors", "cache", "kubernetes"}

func init() {
	dnsserver.Directives = directives
}

func main() {
	coremain.Run()
}
