// Command pause is the sandbox ("pause") process of every pod on the local cluster
// (scripts/local-cluster.sh): it holds the pod's namespaces, reaps orphans and exits on
// SIGINT/SIGTERM. Built static (CGO_ENABLED=0) by scripts/images.sh.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
