#!/usr/bin/env bash
# hack/cluster-guard.sh WHAT: refuses (exit 2) when KUBECONFIG points at a cluster other than the
# project's local one, unless BENCHRUN_TEST_FOREIGN_CLUSTER=yes. The test suites force-delete
# pods, install the operator cluster-wide and create and delete namespaces: run by accident
# against a shared or production cluster, they would do that there. An unset KUBECONFIG is
# fine: the suites then use the local cluster (`hack/cluster.sh env`).
set -euo pipefail
what=${1:-the tests}
local_kubeconfig=${BENCHRUN_CLUSTER_DIR:-/var/lib/benchrun/cluster}/kubeconfig
[ -n "${KUBECONFIG:-}" ] || exit 0
[ "$KUBECONFIG" = "$local_kubeconfig" ] && exit 0
[ "${BENCHRUN_TEST_FOREIGN_CLUSTER:-}" = yes ] && {
  echo "cluster-guard: BENCHRUN_TEST_FOREIGN_CLUSTER=yes: running $what against KUBECONFIG=$KUBECONFIG" >&2
  exit 0
}
cat >&2 <<MSG
cluster-guard: refusing to run $what against KUBECONFIG=$KUBECONFIG.
  It is not the project's local cluster ($local_kubeconfig), and the tests force-delete pods,
  install the operator cluster-wide and create and delete namespaces there.
  Use the local cluster: unset KUBECONFIG (the tests bring it up themselves).
  Or, on a cluster that is yours to break: BENCHRUN_TEST_FOREIGN_CLUSTER=yes make test
MSG
exit 2
