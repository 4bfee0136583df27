package faults_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/incrementalupgrade"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
	"github.com/ray-operator/ray-operator/local/internal/traefik"
)

// upgradeTimeout bounds the RayService test from creation to the old
// cluster's deletion; it takes about two minutes on a 2-core machine.
const upgradeTimeout = 5 * time.Minute

// upgradePoint is an observable phase of a blue/green upgrade at which the
// operator is killed, with the longest seeded delay after it is seen that
// still lands in the phase most of the time.
type upgradePoint struct {
	name      string
	maxJitter time.Duration
	reached   func(upgradeSnapshot) bool
}

// upgradePath is one way a RayService upgrades to a new cluster: its
// strategy and the phases it passes, in order; the test kills the operator
// once in each. The first phase is seen when the spec change is accepted,
// so its kill lands before the new cluster exists or while the operator
// creates it.
type upgradePath struct {
	strategy rayv1.RayServiceUpgradeType
	points   []upgradePoint
}

// incremental: the path moves traffic through a Gateway's HTTPRoute.
func (p upgradePath) incremental() bool {
	return p.strategy == rayv1.RayServiceNewClusterWithIncrementalUpgrade
}

var (
	specChanged   = upgradePoint{name: "spec changed, before the new cluster", maxJitter: 50 * time.Millisecond, reached: func(upgradeSnapshot) bool { return true }}
	greenCreated  = upgradePoint{name: "new cluster created, head starting", maxJitter: 3 * time.Second, reached: func(s upgradeSnapshot) bool { return s.green != "" }}
	greenHead     = upgradePoint{name: "new head Ready, Serve deploying", maxJitter: 2 * time.Second, reached: func(s upgradeSnapshot) bool { return s.greenHeadReady }}
	greenServing  = upgradePoint{name: "Serve RUNNING on the new cluster, the switch due", maxJitter: time.Second, reached: func(s upgradeSnapshot) bool { return s.greenServing }}
	shifting      = upgradePoint{name: "traffic shifting to the new cluster", maxJitter: time.Second, reached: func(s upgradeSnapshot) bool { return s.greenWeight > 0 }}
	greenActive   = upgradePoint{name: "switched, old cluster waiting out the deletion delay", maxJitter: (e2eutil.HelloDeletionDelay - 3) * time.Second, reached: switchedTo}
	blueDeleting  = upgradePoint{name: "old cluster being deleted", maxJitter: 2 * time.Second, reached: func(s upgradeSnapshot) bool { return s.blueDeleting }}
	blueGreen     = upgradePath{strategy: rayv1.RayServiceNewCluster, points: []upgradePoint{specChanged, greenCreated, greenHead, greenServing, greenActive, blueDeleting}}
	incrementalUp = upgradePath{strategy: rayv1.RayServiceNewClusterWithIncrementalUpgrade, points: []upgradePoint{specChanged, greenCreated, greenHead, greenServing, shifting, greenActive, blueDeleting}}
)

// switchedTo holds once the status names the new cluster active and no
// pending one.
func switchedTo(s upgradeSnapshot) bool {
	st := s.rs.Status
	return s.green != "" && st.ActiveServiceStatus.RayClusterName == s.green && st.PendingServiceStatus.RayClusterName == ""
}

// phaseOf names the latest of points s is in.
func phaseOf(points []upgradePoint, s upgradeSnapshot) string {
	phase := "before the upgrade"
	for _, p := range points[1:] {
		if p.reached(s) {
			phase = p.name
		}
	}
	if s.green == "" {
		phase = "no new cluster yet"
	}
	return phase
}

// plannedUpgradeKill is one point with its seeded delays.
type plannedUpgradeKill struct {
	point        upgradePoint
	jitter, down time.Duration
}

func (k plannedUpgradeKill) String() string {
	return fmt.Sprintf("%q+%v (down %v)", k.point.name, k.jitter, k.down)
}

// planUpgradeKills draws, for every phase, how long after it is seen the
// operator is killed (up to the phase's maxJitter) and how long it stays
// dead (under 2 s).
func planUpgradeKills(rng *rand.Rand, points []upgradePoint) []plannedUpgradeKill {
	plan := make([]plannedUpgradeKill, 0, len(points))
	for _, p := range points {
		plan = append(plan, plannedUpgradeKill{
			point:  p,
			jitter: time.Duration(rng.Int64N(int64(p.maxJitter) + 1)).Round(time.Millisecond),
			down:   time.Duration(rng.IntN(2000)) * time.Millisecond,
		})
	}
	return plan
}

// upgradeKill is one kill as it happened: the phase the observer saw the
// upgrade in when the operator was dead.
type upgradeKill struct {
	planned         plannedUpgradeKill
	landed          string
	died, restarted time.Time
	logFile         string
}

// TestRayServiceUpgradeUnderOperatorKills: a RayService upgrade (a
// changed rayClusterConfig) under a request loop, while the operator is
// SIGKILLed once in each phase of the upgrade (the path's points, seeded
// delays) and started again, ends as if nothing happened: no request
// failed; the watch saw exactly one new RayCluster (and the old one never
// recreated); the old cluster got one deletion deadline, kept across
// restarts, at least rayClusterDeletionDelaySeconds after the switch, was
// deleted no earlier and is gone with its Pods; the RayService is Ready on
// the new cluster with no pending one and the application RUNNING.
//
// Blue/green (NewCluster): the requests go to the serve Service, which
// keeps its ClusterIP and ends selecting the new cluster. Incremental
// (NewClusterWithIncrementalUpgrade through the local cluster's Traefik
// Gateway, 50 % steps every 2 s): the requests go to the Gateway, the
// HTTPRoute's weights never move back across the kills, and the last
// route sends the new cluster everything.
func TestRayServiceUpgradeUnderOperatorKills(t *testing.T) {
	t.Parallel()
	for _, path := range []upgradePath{blueGreen, incrementalUp} {
		t.Run(string(path.strategy), func(t *testing.T) {
			t.Parallel()
			shared.upgradeUnderKills(t, path)
		})
	}
}

func (s *suite) upgradeUnderKills(t *testing.T, path upgradePath) {
	ns, op := s.namespaceWithOperator(t, func(ctx context.Context, ns string) { s.dumpRayService(ctx, t, ns) })
	plan := planUpgradeKills(testRand(t, s.seed), path.points)
	t.Logf("%s=%d: kill plan %v", seedEnv, s.seed, plan)
	ctx, cancel := context.WithTimeout(t.Context(), upgradeTimeout)
	defer cancel()
	began := time.Now()
	blue, url, clusterIP := s.serveHello(ctx, t, ns, path)
	o := s.observeUpgrade(ctx, t, ns, blue, path.incremental())

	loop := e2eutil.StartRequestLoop(url)
	loopStarted := time.Now()
	var replies []e2eutil.Reply
	defer func() {
		if replies == nil {
			loop.Finish()
		}
	}()
	waitUntil(ctx, t, "the loop's first answers", func() (bool, error) { return loop.Answered("v1") >= 10, nil })

	s.setAppVersion(ctx, t, ns, "v2")
	changed := time.Now()
	kills := s.killAlongUpgrade(ctx, t, op, o, path.points, plan)
	green := o.snapshot().green
	rs := s.waitServing(ctx, t, ns, green)
	s.waitGone(ctx, t, ns, blue)
	waitUntil(ctx, t, "answers from the new cluster after the old one is gone", func() (bool, error) { return loop.Answered("v2") >= 10, nil })
	replies = loop.Finish()
	stats := e2eutil.CheckUpgradeReplies(t, replies, loopStarted, "v1", "v2")

	if o.incremental {
		o.lookRoute(ctx, green)
		checkRouteForward(t, o.steps(), blue, green)
	} else {
		s.checkServeService(ctx, t, ns, green, clusterIP)
	}
	checkOneNewCluster(t, o.history(), blue, green)
	lateBy := checkDeletedAfterDelay(t, o.history()[blue], o.switched(), rs)
	if err := op.ExitedByItself(); err != nil {
		t.Fatal(err)
	}
	line := upgradeFigures(path, o, kills, stats, o.switched().Sub(changed), lateBy, time.Since(began))
	if o.incremental {
		line += " route_old_new=[" + formatSteps(o.steps(), blue, green)[1:] + "]"
	}
	t.Log(line)
	fmt.Println(line)
}

// serveHello creates the hello RayService (v1) with path's strategy, waits
// until it serves and answers, and returns its cluster, the URL the
// requests go to (blue/green: the serve Service's ClusterIP; incremental:
// the Gateway's listener on the node's address) and the serve Service's
// ClusterIP (blue/green only).
func (s *suite) serveHello(ctx context.Context, t *testing.T, ns string, path upgradePath) (string, string, string) {
	t.Helper()
	rs := e2eutil.HelloRayService(ns, "v1")
	if path.incremental() {
		e2eutil.HelloIncremental(rs, traefik.GatewayClassName)
	}
	for _, obj := range []client.Object{e2eutil.HelloApp(ns), rs} {
		if err := s.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	rs = s.waitRayService(ctx, t, ns, "serving v1", e2eutil.ServingOneCluster)
	blue := rs.Status.ActiveServiceStatus.RayClusterName
	var url, clusterIP string
	if path.incremental() {
		url = "http://" + net.JoinHostPort(s.Cluster.Network.Gateway().String(), strconv.Itoa(int(incrementalupgrade.ListenerPort))) + e2eutil.HelloRoute
	} else {
		svc := &corev1.Service{}
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: naming.ServeServiceName(e2eutil.HelloName)}, svc); err != nil {
			t.Fatal(err)
		}
		clusterIP = svc.Spec.ClusterIP
		url = "http://" + net.JoinHostPort(clusterIP, strconv.Itoa(e2eutil.HelloServePort)) + e2eutil.HelloRoute
	}
	probe := e2eutil.StartRequestLoop(url)
	defer probe.Finish()
	waitUntil(ctx, t, url+" to answer v1", func() (bool, error) { return probe.Answered("v1") > 0, nil })
	return blue, url, clusterIP
}

// observeUpgrade starts an upgrade observer on ns: its RayCluster watch
// from the current list's resourceVersion (blue alone), and its polls
// (with the HTTPRoute's when incremental).
func (s *suite) observeUpgrade(ctx context.Context, t *testing.T, ns, blue string, incremental bool) *upgradeObserver {
	t.Helper()
	wc, err := client.NewWithWatch(s.Cluster.RESTConfig(), client.Options{Scheme: s.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	list := &rayv1.RayClusterList{}
	if err := wc.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	o := newUpgradeObserver(s, ns, blue)
	o.incremental = incremental
	for i := range list.Items {
		o.clusterEvent(watch.Added, &list.Items[i])
	}
	go o.watchClusters(ctx, wc, list.ResourceVersion)
	go o.run(ctx)
	return o
}

// killAlongUpgrade carries out plan on op while o watches the upgrade.
func (s *suite) killAlongUpgrade(ctx context.Context, t *testing.T, op *e2eutil.Operator, o *upgradeObserver, points []upgradePoint, plan []plannedUpgradeKill) []upgradeKill {
	t.Helper()
	var kills []upgradeKill
	for _, k := range plan {
		err := pollFast(ctx, func() (bool, error) {
			snap := o.snapshot()
			return k.point.reached(snap), fmt.Errorf("upgrade at %q (HTTPRoute error: %v)", phaseOf(points, snap), snap.routeErr)
		})
		if err != nil {
			t.Fatalf("waiting for kill point %q: %v", k.point.name, err)
		}
		pause(ctx, k.jitter)
		died, err := op.Kill()
		if err != nil {
			t.Fatal(err)
		}
		landed := s.phaseNow(ctx, o, points)
		pause(ctx, k.down)
		restarted := time.Now()
		logFile, err := op.Start()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("killed the operator at %v, in phase %q; restarted %v later", k, landed, restarted.Sub(died).Round(time.Millisecond))
		kills = append(kills, upgradeKill{planned: k, landed: landed, died: died, restarted: restarted, logFile: logFile})
	}
	return kills
}

// phaseNow is the upgrade's phase while the operator is dead: whether the
// new cluster exists is read from the API server (the watch may lag); the
// rest from the observer.
func (s *suite) phaseNow(ctx context.Context, o *upgradeObserver, points []upgradePoint) string {
	snap := o.snapshot()
	list := &rayv1.RayClusterList{}
	if snap.green == "" && s.Client.List(ctx, list, client.InNamespace(o.ns)) == nil {
		for _, c := range list.Items {
			if c.Name != snap.blue {
				snap.green = c.Name
			}
		}
	}
	return phaseOf(points, snap)
}

// waitServing waits until the RayService serves from green alone and the
// application runs there, and returns it.
func (s *suite) waitServing(ctx context.Context, t *testing.T, ns, green string) *rayv1.RayService {
	t.Helper()
	return s.waitRayService(ctx, t, ns, "serving from "+green, func(rs *rayv1.RayService) error {
		if err := e2eutil.ServingOneCluster(rs); err != nil {
			return err
		}
		return e2eutil.HelloServedBy(rs, green)
	})
}

// waitRayService waits until check passes on the RayService.
func (s *suite) waitRayService(ctx context.Context, t *testing.T, ns, what string, check func(*rayv1.RayService) error) *rayv1.RayService {
	t.Helper()
	rs := &rayv1.RayService{}
	err := pollFast(ctx, func() (bool, error) {
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: e2eutil.HelloName}, rs); err != nil {
			return false, err
		}
		err := check(rs)
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("RayService %s: waiting for %s: %v", e2eutil.HelloName, what, err)
	}
	return rs
}

// setAppVersion changes APP_VERSION in the head template: a change of
// rayClusterConfig, which starts an upgrade.
func (s *suite) setAppVersion(ctx context.Context, t *testing.T, ns, version string) {
	t.Helper()
	if _, err := e2eutil.SetHelloHeadPod(ctx, s.Client, ns, e2eutil.HelloHeadPod(version)); err != nil {
		t.Fatalf("setting APP_VERSION=%s: %v", version, err)
	}
}

// waitGone waits until the RayCluster and its Pods are gone.
func (s *suite) waitGone(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	if err := pollFast(ctx, func() (bool, error) { return e2eutil.ClusterGone(ctx, s.Client, ns, name) }); err != nil {
		t.Fatalf("RayCluster %s is not gone: %v", name, err)
	}
}

// checkServeService: the serve Service kept its ClusterIP (it was never
// recreated) and selects green's serving Pods.
func (s *suite) checkServeService(ctx context.Context, t *testing.T, ns, green, clusterIP string) {
	t.Helper()
	svc := &corev1.Service{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: naming.ServeServiceName(e2eutil.HelloName)}, svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != clusterIP || svc.Spec.Selector[rayv1.LabelCluster] != green || svc.Spec.Selector[rayv1.LabelServe] != "true" {
		t.Errorf("serve Service: ClusterIP %s (was %s), selector %v; want the same ClusterIP selecting %s's Pods with %s=true",
			svc.Spec.ClusterIP, clusterIP, svc.Spec.Selector, green, rayv1.LabelServe)
	}
}

// checkOneNewCluster: over the whole run the watch saw the old cluster and
// exactly one new one, each created once.
func checkOneNewCluster(t *testing.T, seen map[string]clusterHistory, blue, green string) {
	t.Helper()
	var names []string
	for name, h := range seen {
		names = append(names, fmt.Sprintf("%s (%d UIDs)", name, len(h.uids)))
	}
	if len(seen) != 2 || len(seen[blue].uids) != 1 || len(seen[green].uids) != 1 {
		t.Errorf("RayClusters seen over the run: %v; want %s and one new cluster, each created once", names, blue)
	}
}

// checkDeletedAfterDelay: the old cluster got exactly one deletion
// deadline (a restart neither reset nor moved it), at least the deletion
// delay after the switch the observer saw (less 1 s: the deadline has
// whole seconds), and its deletion came no earlier than that deadline. It
// returns how long after the deadline the deletion was seen.
func checkDeletedAfterDelay(t *testing.T, blue clusterHistory, switched time.Time, rs *rayv1.RayService) time.Duration {
	t.Helper()
	if len(blue.deadlines) != 1 {
		t.Fatalf("the old cluster's deletion deadlines over the run: %v; want exactly one", blue.deadlines)
	}
	deadline, err := time.Parse(time.RFC3339, blue.deadlines[0])
	if err != nil {
		t.Fatal(err)
	}
	// The deadline is written with second precision (up to 1 s early), and
	// the observer sees the switch some time after the operator made it (its
	// 100 ms polls, later on a loaded machine; 1.04 s in all was seen once):
	// 2 s of slack, far below the delay a missing wait would lose.
	delay := time.Duration(*rs.Spec.RayClusterDeletionDelaySeconds) * time.Second
	if switched.IsZero() || deadline.Before(switched.Add(delay-2*time.Second)) {
		t.Errorf("deletion deadline %v, switch seen at %v: want at least %v after the switch", deadline, switched, delay)
	}
	if blue.deletingAt.Before(deadline) {
		t.Errorf("the old cluster was deleted at %v, before its deadline %v", blue.deletingAt, deadline)
	}
	return blue.deletingAt.Sub(deadline)
}

// upgradeFigures is the test's line of figures.
func upgradeFigures(path upgradePath, o *upgradeObserver, kills []upgradeKill, st e2eutil.ReplyStats, toSwitch, lateBy, took time.Duration) string {
	var recover, startup, landed []string
	for _, k := range kills {
		progress, ok := o.progressAfter(k.died)
		recover = append(recover, secondsSince(k.died, progress, ok))
		workers, ok := workersStarted(k.logFile, "rayservice")
		startup = append(startup, secondsSince(k.restarted, workers, ok))
		landed = append(landed, strconv.Quote(k.landed))
	}
	return fmt.Sprintf("FIGURES upgrade=%s runs=1 kills=%d requests_sent=%d requests_failed=%d seconds_kill_to_next_progress=[%s] seconds_restart_to_rayservice_workers=[%s] seconds_spec_change_to_switch=%.1f old_deleted_s_after_deadline=%.2f seconds_total=%.0f landed=[%s]",
		path.strategy, len(kills), st.Total, st.Failed, strings.Join(recover, " "), strings.Join(startup, " "), toSwitch.Seconds(), lateBy.Seconds(), took.Seconds(), strings.Join(landed, ", "))
}

// waitUntil polls cond at the observer's pace until ctx ends.
func waitUntil(ctx context.Context, t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	if err := pollFast(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// dumpRayService prints the namespace's RayService, RayClusters and Pods
// when the test failed.
func (s *suite) dumpRayService(ctx context.Context, t *testing.T, ns string) {
	rs := &rayv1.RayService{}
	if s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: e2eutil.HelloName}, rs) == nil {
		st := rs.Status
		t.Logf("RayService: active %q, pending %q, serviceStatus %q, conditions %+v", st.ActiveServiceStatus.RayClusterName, st.PendingServiceStatus.RayClusterName, st.ServiceStatus, st.Conditions)
	}
	s.dump(ctx, t, ns)
}
