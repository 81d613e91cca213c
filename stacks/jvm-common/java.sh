#!/bin/sh
# The JVM stacks' launcher (/app/java.sh): java -jar /app/app.jar with
#   -XX:MaxRAMPercentage=75            the heap follows the container's memory limit;
#   -XX:ActiveProcessorCount=P         P = the CPU limit in BENCHRUN_CPU_LIMIT_MILLICORES (set by
#                                      the benchrun operator from the Downward API) rounded up to
#                                      whole CPUs, at least 1 (500m → 1, 1500m → 2, 3500m → 4),
#                                      the rule of the Express workers and Go's GOMAXPROCS; left
#                                      to the JVM's own container detection without the variable;
#   $JAVA_OPTS                         last, so a target's own flags override both.
# BENCHRUN_JAVA (default java) names the java binary, for tests/stacks/unit.sh.
set -eu
procs=""
milli=${BENCHRUN_CPU_LIMIT_MILLICORES:-}
case $milli in
  ''|*[!0-9]*) ;;
  *) procs=$(( (milli + 999) / 1000 )); [ "$procs" -ge 1 ] || procs=1 ;;
esac
# JAVA_OPTS is split on whitespace on purpose (several flags in one variable).
# shellcheck disable=SC2086
exec "${BENCHRUN_JAVA:-java}" -XX:MaxRAMPercentage=75 ${procs:+-XX:ActiveProcessorCount=$procs} ${JAVA_OPTS:-} -jar /app/app.jar
