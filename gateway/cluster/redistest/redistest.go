// Package redistest starts a real redis-server for tests: one process per
// test, listening on a unix socket in the test's temporary directory (no
// TCP port, so parallel packages never collide), with the append-only file
// on and RDB snapshots off — the durability contract the gateway documents
// (appendonly yes). Stop and Start restart the same server on the same
// directory, so a test can check what survives a Redis restart. The test
// is skipped with a clear message when /usr/bin/redis-server is absent.
//
// The helper owns the process it starts and ends it by its pid in
// t.Cleanup; it never touches another redis-server.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// LeakOptions are for goleak in packages whose tests stop Redis under a
// client: go-redis retries a failed dial once a second in a goroutine of
// the client's pool, which ends within that second of the client's Close.
var LeakOptions = []goleak.Option{goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial")}

// Binary is the redis-server the tests run (Debian's redis-server package;
// CI installs it).
const Binary = "/usr/bin/redis-server"

// Server is one redis-server started for a test.
type Server struct {
	t    testing.TB
	dir  string
	sock string

	mu   sync.Mutex // mu guards cmd, stop and log
	cmd  *exec.Cmd
	stop context.CancelFunc
	log  *bytes.Buffer
}

// Start starts a redis-server for t and stops it when t ends. It skips t
// when the binary is not installed.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		t.Skipf("redistest: %s is not installed (apt-get install redis-server); skipping a test that needs a real Redis", Binary)
	}
	// Unix socket paths are limited to ~107 bytes; t.TempDir() can be
	// longer, so the socket lives in a short directory of its own.
	sockDir, err := os.MkdirTemp("", "rt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	s := &Server{t: t, dir: t.TempDir(), sock: filepath.Join(sockDir, "r.sock")}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's address as the gateway's cluster.redis_url takes it.
func (s *Server) URL() string { return "unix://" + s.sock }

// Socket is the unix socket path.
func (s *Server) Socket() string { return s.sock }

// Client returns a go-redis client on the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Start (re)starts the server on its directory; the append-only file
// written before a Stop is loaded again.
func (s *Server) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	s.log = &bytes.Buffer{}
	ctx, stop := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, Binary, "--port", "0", "--unixsocket", s.sock, "--unixsocketperm", "700",
		"--dir", s.dir, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
		"--daemonize", "no", "--loglevel", "warning", "--databases", "2")
	cmd.Stdout, cmd.Stderr = s.log, s.log
	// Stop cancels ctx: SIGTERM first (redis flushes its append-only file),
	// SIGKILL only if it has not exited 10 s later.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		stop()
		s.t.Fatalf("redistest: start %s: %v", Binary, err)
	}
	s.cmd, s.stop = cmd, stop
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.DialTimeout("unix", s.sock, 100*time.Millisecond); err == nil {
			ok := ping(c)
			_ = c.Close()
			if ok {
				return
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			stop()
			s.cmd = nil
			s.t.Fatalf("redistest: redis-server did not answer within 10 s:\n%s", s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ping sends PING and reports whether PONG came back (the server is
// loading its append-only file until then).
func ping(c net.Conn) bool {
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 64)
	n, _ := c.Read(buf)
	return bytes.HasPrefix(buf[:n], []byte("+PONG"))
}

// Stop ends the server (SIGTERM, which flushes the append-only file) and
// waits for it. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.stop()
	_ = s.cmd.Wait()
	s.cmd, s.stop = nil, nil
}

// Flush empties every database (between subtests).
func (s *Server) Flush(ctx context.Context) error {
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock})
	defer c.Close()
	if err := c.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("redistest: flush: %w", err)
	}
	return nil
}
