// Command rttprobe times round trips to memcached-text or RESP endpoints, one at a time on one
// connection each: what `cachelab run --target k8s` measures a link's achieved RTT with, from a
// pod on the link's near end (cachelab.k8s.rtt). The request is one the endpoint answers at once
// without touching data: memcached `mn` (answered `MN` by memcached and by the middleware) or
// RESP `PING`. For each address it prints one JSON line, {"addr": ..., "samples_ms": [...]}, or
// {"addr": ..., "error": ...} and exits 1 after the last address. Built static
// (CGO_ENABLED=0) into the toxiproxy image by scripts/images.sh.
//
//	rttprobe -protocol memcache_text -n 200 [-wait 30s] HOST:PORT...
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"time"
)

var probes = map[string][2]string{
	"memcache_text": {"mn\r\n", "MN\r\n"},
	"redis":         {"*1\r\n$4\r\nPING\r\n", "+PONG\r\n"},
}

type result struct {
	Addr      string    `json:"addr"`
	SamplesMs []float64 `json:"samples_ms,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// dial connects to addr, trying again until wait has passed: a pod that has just started may be
// refused until the NetworkPolicy firewall of its node admits it (kube-router syncs on the
// pod's creation, a moment after it runs).
func dial(addr string, timeout, wait time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(wait)
	for {
		conn, err := net.DialTimeout("tcp", addr, timeout)
		if err == nil || time.Now().After(deadline) {
			return conn, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func probe(addr, protocol string, n int, timeout, wait time.Duration) ([]float64, error) {
	conn, err := dial(addr, timeout, wait)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetNoDelay(true)
	request, end := []byte(probes[protocol][0]), []byte(probes[protocol][1])
	buf := make([]byte, 256)
	samples := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		conn.SetDeadline(start.Add(timeout))
		if _, err := conn.Write(request); err != nil {
			return nil, err
		}
		var got []byte
		for !bytes.HasSuffix(got, end) {
			k, err := conn.Read(buf)
			if err != nil {
				return nil, fmt.Errorf("after %d round trips: %w", i, err)
			}
			got = append(got, buf[:k]...)
		}
		samples = append(samples, float64(time.Since(start).Nanoseconds())/1e6)
	}
	return samples, nil
}

func main() {
	protocol := flag.String("protocol", "memcache_text", "memcache_text or redis")
	n := flag.Int("n", 200, "round trips per address")
	timeout := flag.Duration("timeout", 5*time.Second, "per connect and per reply")
	wait := flag.Duration("wait", 30*time.Second, "how long to keep trying to connect")
	flag.Parse()
	if _, ok := probes[*protocol]; !ok || *n < 1 || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: rttprobe [-protocol memcache_text|redis] [-n N] [-wait D] HOST:PORT...")
		os.Exit(2)
	}
	failed := false
	out := json.NewEncoder(os.Stdout)
	for _, addr := range flag.Args() {
		samples, err := probe(addr, *protocol, *n, *timeout, *wait)
		r := result{Addr: addr, SamplesMs: samples}
		if err != nil {
			r = result{Addr: addr, Error: err.Error()}
			failed = true
		}
		out.Encode(r)
	}
	if failed {
		os.Exit(1)
	}
}
