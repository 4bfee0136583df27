package podworker

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// healthServer serves grpc.health.v1 on a localhost port (the fake
// sandbox's pod IP) until the test ends.
func healthServer(t *testing.T) (*health.Server, int32) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return hs, int32(lis.Addr().(*net.TCPAddr).Port)
}

// freePort is a localhost port nothing listens on.
func freePort(t *testing.T) int32 {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := int32(lis.Addr().(*net.TCPAddr).Port)
	_ = lis.Close()
	return port
}

func TestGRPCCheck(t *testing.T) {
	hs, port := healthServer(t)
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("ray", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	cases := map[string]struct {
		port    int32
		service *string
		wantErr string
	}{
		"serving, default service": {port: port},
		"serving, named service":   {port: port, service: ptr.To("ray")},
		"not serving":              {port: port, service: ptr.To("down"), wantErr: `service unhealthy (responded with "NOT_SERVING")`},
		"unknown service":          {port: port, service: ptr.To("nope"), wantErr: "code = NotFound"},
		"nothing listens":          {port: freePort(t), wantErr: "code = Unavailable"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sb := &fakeSandbox{}
			target := handlerTarget{ip: sb.IP(), dial: sb.DialContext}
			err := runProbeHandler(t.Context(), target, &corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: tc.port, Service: tc.service}}, time.Second)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("err = %v, want success", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestGRPCProbeTimesOut(t *testing.T) {
	// A listener that accepts and never answers: the handshake hangs.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lis.Close() }()
	port := int32(lis.Addr().(*net.TCPAddr).Port)
	sb := &fakeSandbox{}
	target := handlerTarget{ip: sb.IP(), dial: sb.DialContext}
	start := time.Now()
	err = runProbeHandler(context.Background(), target, &corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: port}}, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "DeadlineExceeded") {
		t.Errorf("err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v, want about the 200ms timeout", d)
	}
}

func TestGRPCReadinessProbeDrivesReady(t *testing.T) {
	hs, port := healthServer(t)
	hs.SetServingStatus("ray", healthpb.HealthCheckResponse_SERVING)
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: port, Service: ptr.To("ray")}},
		PeriodSeconds: 10, FailureThreshold: 1, SuccessThreshold: 1, TimeoutSeconds: 5,
	}
	h := newHarness(t, pod)
	h.nextStart("main")
	got := h.waitPod("Ready", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].Ready })
	if c := condition(got, corev1.PodReady); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %+v, want True", c)
	}

	hs.SetServingStatus("ray", healthpb.HealthCheckResponse_NOT_SERVING)
	h.waitTimers(1)
	h.clk.Step(10 * time.Second)
	got = h.waitPod("not ready", func(p *corev1.Pod) bool { return !p.Status.ContainerStatuses[0].Ready })
	want := corev1.PodCondition{
		Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reasonContainersNotReady,
		Message: "containers with unready status: [main]", LastTransitionTime: metav1.NewTime(t0.Add(10 * time.Second)),
	}
	if diff := cmp.Diff(want, condition(got, corev1.PodReady)); diff != "" {
		t.Errorf("Ready (-want +got):\n%s", diff)
	}
	h.waitEvent(`Warning Unhealthy Readiness probe failed: service unhealthy (responded with "NOT_SERVING")`)
}

func TestGRPCLivenessFailureRestartsContainer(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: freePort(t)}},
		PeriodSeconds: 5, FailureThreshold: 1, SuccessThreshold: 1, TimeoutSeconds: 1,
	}
	h := newHarness(t, pod)
	h.nextStart("main")
	h.nextStart("main")
	got := h.waitPod("restart", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].RestartCount == 1 })
	if code := got.Status.ContainerStatuses[0].LastTerminationState.Terminated.ExitCode; code != 143 {
		t.Errorf("last exit code = %d, want 143", code)
	}
	h.waitEvent("Normal Killing Container main failed liveness probe, will be restarted")
}
