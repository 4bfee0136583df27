package rediscleanup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// RedisServerEnv names the environment variable that holds the path of a
// redis-server binary; `make test-e2e` sets it from hack/redis-server.sh.
const RedisServerEnv = "RAY_OPERATOR_REDIS_SERVER"

// redisServer is a redis-server process started by the test.
type redisServer struct {
	addr     string
	password string
}

// startRedis starts redis-server on 127.0.0.1 with a free port, the given
// password and no persistence, and stops it (by pid) when t ends.
func startRedis(t *testing.T, password string) *redisServer {
	t.Helper()
	bin := os.Getenv(RedisServerEnv)
	if bin == "" {
		t.Fatalf("%s is not set: run `make test-e2e`, or set it to a redis-server binary (hack/redis-server.sh prints one, installing Debian's redis-server when missing)", RedisServerEnv)
	}
	dir := t.TempDir()
	port := testenv.FreePorts(t, 1)[0]
	cmd := exec.Command(bin,
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--requirepass", password,
		"--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--loglevel", "warning")
	logPath := filepath.Join(dir, "redis.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = logFile.Close()
	})

	r := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), password: password}
	var reply any
	var pingErr error
	err = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		reply, pingErr = r.tryDo("PING")
		if pingErr == nil && reply == "PONG" {
			return true, nil
		}
		select {
		case <-done:
			log, _ := os.ReadFile(logPath)
			t.Fatalf("redis-server exited: %s", log)
		default:
		}
		return false, nil
	})
	if err != nil {
		log, _ := os.ReadFile(logPath)
		t.Fatalf("redis-server on %s not ready after 30s (last: %v %v): %s", r.addr, reply, pingErr, log)
	}
	return r
}

// do runs one command after AUTH and fails t on error.
func (r *redisServer) do(t *testing.T, args ...string) any {
	t.Helper()
	reply, err := r.tryDo(args...)
	if err != nil {
		t.Fatalf("redis %v: %v", args, err)
	}
	return reply
}

// tryDo runs AUTH and one command on a fresh connection, speaking RESP
// directly (the module has no Redis client dependency).
func (r *redisServer) tryDo(args ...string) (any, error) {
	conn, err := net.DialTimeout("tcp", r.addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	rd := bufio.NewReader(conn)
	if reply, err := roundTrip(conn, rd, "AUTH", r.password); err != nil {
		return nil, err
	} else if reply != "OK" {
		return nil, fmt.Errorf("AUTH: %v", reply)
	}
	return roundTrip(conn, rd, args...)
}

func roundTrip(w io.Writer, rd *bufio.Reader, args ...string) (any, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return nil, err
	}
	return readReply(rd)
}

// readReply reads one RESP2 reply: simple strings and bulk strings as
// string, integers as int64, nil as nil, arrays as []any; an error reply is
// returned as error.
func readReply(rd *bufio.Reader) (any, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply line")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, errors.New(line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, 0, n)
		for range n {
			v, err := readReply(rd)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", line)
}

// keys lists every key in the server (KEYS *: the test's server holds a
// handful).
func (r *redisServer) keys(t *testing.T) []string {
	t.Helper()
	reply, ok := r.do(t, "KEYS", "*").([]any)
	if !ok {
		t.Fatalf("KEYS: unexpected reply")
	}
	out := make([]string, 0, len(reply))
	for _, k := range reply {
		out = append(out, fmt.Sprint(k))
	}
	return out
}
