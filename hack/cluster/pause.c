/* Minimal pod sandbox ("pause") process for the local benchrun cluster.
 * Built static by hack/cluster.sh (gcc -static -Os) and imported as
 * benchrun.local/pause:3.10, because the cluster has no registry to pull
 * the upstream pause image from. It sleeps in sigsuspend(), reaps any
 * children reparented to it (it is PID 1 of the sandbox when the pod shares
 * its PID namespace) and exits 0 on SIGINT/SIGTERM. */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_term(int sig) { (void)sig; _exit(0); }

static void on_chld(int sig) {
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(int argc, char **argv) {
	struct sigaction sa;
	sigset_t none;
	(void)argv;
	if (argc > 1) { /* "pause -v" and friends: nothing to configure */
		static const char msg[] = "benchrun pause 3.10\n";
		(void)!write(1, msg, sizeof msg - 1);
		return 0;
	}
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	sa.sa_handler = on_term;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&none);
	for (;;)
		sigsuspend(&none);
}
