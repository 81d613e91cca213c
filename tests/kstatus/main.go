// kstatus reads one Kubernetes object as JSON on stdin (the output of `kubectl get -o json`)
// and prints the status that sigs.k8s.io/cli-utils' kstatus computes for it (InProgress,
// Current, Failed, ...), the library Flux's `wait`, kpt and Config Sync use. The end-to-end
// test `gitops_tools_follow_a_run_to_its_end` builds it to check BenchmarkRun status against
// the real library.
package main

import (
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reading stdin:", err)
		os.Exit(2)
	}
	// The unstructured decoder keeps integers as int64, as kstatus reads generations.
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		fmt.Fprintln(os.Stderr, "stdin is not a Kubernetes object in JSON:", err)
		os.Exit(2)
	}
	res, err := status.Compute(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kstatus:", err)
		os.Exit(1)
	}
	// First line: the status alone, for scripts; then the message.
	fmt.Println(res.Status)
	fmt.Println(res.Message)
}
