// Command real-apiserver runs etcd and kube-apiserver, both in this one process, on loopback, for Lab
// Console's tests: a real Kubernetes API server where the emulator would otherwise stand
// (docs/real-apiserver.md). It writes an admin kubeconfig, prints one JSON line on stdout once the
// server's port is known, and on SIGINT/SIGTERM (or, with --exit-with-stdin, when stdin closes) stops
// both and removes its data folder.
//
// `npm run cluster:real` builds and runs it; run by hand it reports v0.0.0 as its version unless built
// with the -ldflags that src/real-cluster/go-binary.ts passes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// Exit codes the launcher tells apart.
const (
	exitFailed    = 1
	exitUsage     = 2
	exitPortInUse = 3
)

type settings struct {
	kubeconfig    string
	port          int
	dataDir       string
	verbosity     int
	etcdLogLevel  string
	exitWithStdin bool
}

func parseSettings() settings {
	var s settings
	flag.StringVar(&s.kubeconfig, "kubeconfig", "", "where to write the admin kubeconfig (required)")
	flag.IntVar(&s.port, "port", 6443, "the API server's port on 127.0.0.1")
	flag.StringVar(&s.dataDir, "data-dir", "", "etcd's data and the certificates; a new temporary folder when empty. Removed on exit either way")
	flag.IntVar(&s.verbosity, "v", 0, "kube-apiserver's log verbosity")
	flag.StringVar(&s.etcdLogLevel, "etcd-log-level", "error", "etcd's log level: debug, info, warn, error")
	flag.BoolVar(&s.exitWithStdin, "exit-with-stdin", false, "stop when stdin closes (the launcher's end of a pipe), so a killed launcher leaves nothing running")
	flag.Parse()
	if s.kubeconfig == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: real-apiserver --kubeconfig PATH [--port 6443] [--data-dir DIR] [--v N]")
		os.Exit(exitUsage)
	}
	return s
}

// event is one line of stdout, for the launcher; everything meant for people goes to stderr.
func event(fields map[string]any) {
	line, _ := json.Marshal(fields)
	fmt.Println(string(line))
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "real-apiserver: "+format+"\n", args...)
	os.Exit(code)
}

func main() {
	s := parseSettings()

	// The port first: if it is taken, say so before doing any work.
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			fail(exitPortInUse, "port %d on 127.0.0.1 is in use (another API server or emulator?); choose another with --port", s.port)
		}
		fail(exitFailed, "cannot listen on 127.0.0.1:%d: %v", s.port, err)
	}
	port := listener.Addr().(*net.TCPAddr).Port

	dir := s.dataDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "lab-real-apiserver-"); err != nil {
			fail(exitFailed, "no data folder: %v", err)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		fail(exitFailed, "no data folder: %v", err)
	}
	code := run(s, listener, port, dir)
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintf(os.Stderr, "real-apiserver: could not remove %s: %v\n", dir, err)
	}
	event(map[string]any{"event": "stopped", "code": code})
	os.Exit(code)
}

func run(s settings, listener net.Listener, port int, dir string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// When the launcher dies, stdout and stderr are pipes nobody reads: without this the next log line
	// would kill the process with SIGPIPE before it removes its data. With SIGPIPE caught, such a
	// write only fails.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "real-apiserver: %v: stopping\n", sig)
		cancel()
		// A second signal means the graceful stop is taking too long for whoever waits.
		<-signals
		fmt.Fprintln(os.Stderr, "real-apiserver: second signal: exiting now")
		_ = os.RemoveAll(dir)
		os.Exit(exitFailed)
	}()
	if s.exitWithStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			fmt.Fprintln(os.Stderr, "real-apiserver: stdin closed: stopping")
			cancel()
		}()
	}

	p, err := makePKI(filepath.Join(dir, "pki"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "real-apiserver: certificates: %v\n", err)
		return exitFailed
	}
	etcd, etcdURL, err := startEtcd(dir, s.etcdLogLevel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "real-apiserver: %v\n", err)
		return exitFailed
	}
	defer etcd.Close()

	server := fmt.Sprintf("https://127.0.0.1:%d", port)
	if err := p.writeKubeconfig(s.kubeconfig, server); err != nil {
		fmt.Fprintf(os.Stderr, "real-apiserver: kubeconfig: %v\n", err)
		return exitFailed
	}
	event(map[string]any{"event": "serving", "server": server, "kubeconfig": s.kubeconfig, "etcd": etcdURL, "dataDir": dir})

	apiserverDone := make(chan error, 1)
	go func() { apiserverDone <- runAPIServer(ctx, listener, apiserverArgs(p, etcdURL, s.verbosity)) }()

	select {
	case err := <-apiserverDone:
		// The API server ends on its own only when it cannot run.
		if ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "real-apiserver: kube-apiserver stopped: %v\n", err)
			return exitFailed
		}
		return 0
	case err := <-etcd.Err():
		fmt.Fprintf(os.Stderr, "real-apiserver: etcd stopped: %v\n", err)
		return exitFailed
	case <-ctx.Done():
	}
	select {
	case err := <-apiserverDone:
		if err != nil {
			fmt.Fprintf(os.Stderr, "real-apiserver: kube-apiserver: %v\n", err)
		}
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "real-apiserver: kube-apiserver did not stop within 30 s; stopping etcd under it")
	}
	return 0
}
