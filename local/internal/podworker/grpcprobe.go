package podworker

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// grpcCheck calls grpc.health.v1.Health/Check on the pod's port from the
// host, as a kubelet does: SERVING is a success; any other answer, a
// connection error or the probe's timeout (ctx) is a failure. Like a
// kubelet it uses no TLS.
func grpcCheck(ctx context.Context, t handlerTarget, h *corev1.GRPCAction) error {
	addr := net.JoinHostPort(t.ip.String(), strconv.Itoa(int(h.Port)))
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return t.dial(ctx, "tcp", a) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent("kube-probe/ray-operator"))
	if err != nil {
		return fmt.Errorf("gRPC probe of %s: %w", addr, err)
	}
	defer func() { _ = conn.Close() }()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: ptr.Deref(h.Service, "")})
	if err != nil {
		return fmt.Errorf("gRPC probe of %s failed: %w", addr, err)
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("service unhealthy (responded with %q)", s.String())
	}
	return nil
}
