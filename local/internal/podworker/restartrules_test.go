package podworker

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// rules builds restartPolicyRules with action Restart.
func rule(op corev1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) corev1.ContainerRestartRule {
	return corev1.ContainerRestartRule{Action: corev1.ContainerRestartRuleActionRestart,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
}

// TestContainerShouldRestart restates the kubelet's decision
// (k8s.io/kubernetes v1.36.3 pkg/api/v1/pod ContainerShouldRestart): rules
// first, then the container's policy, then the pod's.
func TestContainerShouldRestart(t *testing.T) {
	policy := func(p corev1.ContainerRestartPolicy) *corev1.ContainerRestartPolicy { return &p }
	tests := map[string]struct {
		pod    corev1.RestartPolicy
		policy *corev1.ContainerRestartPolicy
		rules  []corev1.ContainerRestartRule
		code   int32
		want   bool
	}{
		"pod Never, no container policy, failure":      {pod: corev1.RestartPolicyNever, code: 1, want: false},
		"pod OnFailure, success":                       {pod: corev1.RestartPolicyOnFailure, code: 0, want: false},
		"pod OnFailure, failure":                       {pod: corev1.RestartPolicyOnFailure, code: 1, want: true},
		"pod Always, success":                          {pod: corev1.RestartPolicyAlways, code: 0, want: true},
		"pod unset means Always":                       {code: 0, want: true},
		"container OnFailure in a Never pod, failure":  {pod: corev1.RestartPolicyNever, policy: policy(corev1.ContainerRestartPolicyOnFailure), code: 137, want: true},
		"container OnFailure in a Never pod, success":  {pod: corev1.RestartPolicyNever, policy: policy(corev1.ContainerRestartPolicyOnFailure), code: 0, want: false},
		"container Always in a Never pod, success":     {pod: corev1.RestartPolicyNever, policy: policy(corev1.ContainerRestartPolicyAlways), code: 0, want: true},
		"container Never in an Always pod, failure":    {pod: corev1.RestartPolicyAlways, policy: policy(corev1.ContainerRestartPolicyNever), code: 1, want: false},
		"rule In matches":                              {pod: corev1.RestartPolicyNever, policy: policy(corev1.ContainerRestartPolicyNever), rules: []corev1.ContainerRestartRule{rule(corev1.ContainerRestartRuleOnExitCodesOpIn, 42, 43)}, code: 43, want: true},
		"rule In misses: the container's policy":       {pod: corev1.RestartPolicyAlways, policy: policy(corev1.ContainerRestartPolicyNever), rules: []corev1.ContainerRestartRule{rule(corev1.ContainerRestartRuleOnExitCodesOpIn, 42)}, code: 1, want: false},
		"rule NotIn matches":                           {pod: corev1.RestartPolicyNever, policy: policy(corev1.ContainerRestartPolicyNever), rules: []corev1.ContainerRestartRule{rule(corev1.ContainerRestartRuleOnExitCodesOpNotIn, 0)}, code: 2, want: true},
		"rule NotIn misses":                            {pod: corev1.RestartPolicyNever, policy: policy(corev1.ContainerRestartPolicyNever), rules: []corev1.ContainerRestartRule{rule(corev1.ContainerRestartRuleOnExitCodesOpNotIn, 0)}, code: 0, want: false},
		"rules without a container policy are ignored": {pod: corev1.RestartPolicyNever, rules: []corev1.ContainerRestartRule{rule(corev1.ContainerRestartRuleOnExitCodesOpIn, 1)}, code: 1, want: false},
		"RestartAllContainers (gate off) falls back to the policy": {pod: corev1.RestartPolicyNever, policy: policy(corev1.ContainerRestartPolicyNever),
			rules: []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{1}}}}, code: 1, want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := &corev1.Container{Name: "c", RestartPolicy: tc.policy, RestartPolicyRules: tc.rules}
			if got := containerShouldRestart(c, &corev1.PodSpec{RestartPolicy: tc.pod}, tc.code); got != tc.want {
				t.Errorf("containerShouldRestart = %v, want %v", got, tc.want)
			}
		})
	}
}

// withPolicy sets the restartPolicy (and rules) of the container named name.
func withPolicy(pod *corev1.Pod, name string, p corev1.ContainerRestartPolicy, rules ...corev1.ContainerRestartRule) *corev1.Pod {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			pod.Spec.Containers[i].RestartPolicy = ptr.To(p)
			pod.Spec.Containers[i].RestartPolicyRules = rules
		}
	}
	return pod
}

// statusOf returns the status of the container named name.
func statusOf(p *corev1.Pod, name string) corev1.ContainerStatus {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == name {
			return s
		}
	}
	return corev1.ContainerStatus{}
}

// TestContainerOnFailureInNeverPod is the SidecarMode head Pod: the pod's
// policy is Never, its submitter container's OnFailure. A failure restarts
// only that container (restartCount 1, lastState its exit) while the other
// runs on; a success does not, and the pod keeps running.
func TestContainerOnFailureInNeverPod(t *testing.T) {
	h := newHarness(t, withPolicy(makePod(corev1.RestartPolicyNever, nil, "head", "submitter"), "submitter", corev1.ContainerRestartPolicyOnFailure))
	h.nextStart("head")
	h.nextStart("submitter").exit(137)
	second := h.nextStart("submitter") // the first restart is immediate
	got := h.waitPod("restarted", func(p *corev1.Pod) bool {
		return statusOf(p, "submitter").State.Running != nil && statusOf(p, "submitter").RestartCount == 1
	})
	st := statusOf(got, "submitter")
	if st.RestartCount != 1 || st.LastTerminationState.Terminated == nil || st.LastTerminationState.Terminated.ExitCode != 137 || got.Status.Phase != corev1.PodRunning {
		t.Fatalf("submitter %+v, phase %s", st, got.Status.Phase)
	}
	second.exit(1)
	h.waitPod("CrashLoopBackOff", func(p *corev1.Pod) bool {
		w := statusOf(p, "submitter").State.Waiting
		return w != nil && w.Reason == reasonCrashLoopBackOff && p.Status.Phase == corev1.PodRunning
	})
	h.waitTimers(1)
	h.clk.Step(10 * time.Second)
	h.nextStart("submitter").exit(0)
	got = h.waitPod("submitter completed", func(p *corev1.Pod) bool { return statusOf(p, "submitter").State.Terminated != nil })
	st = statusOf(got, "submitter")
	if st.RestartCount != 2 || st.State.Terminated.ExitCode != 0 || st.LastTerminationState.Terminated.ExitCode != 1 || got.Status.Phase != corev1.PodRunning {
		t.Errorf("submitter %+v, phase %s", st, got.Status.Phase)
	}
	h.noStart()
}

// TestContainerOnFailureAloneFailsOnlyForGood: a Never pod whose only
// container restarts OnFailure is Running while it restarts and Succeeded
// once it exits 0.
func TestContainerOnFailureAloneFailsOnlyForGood(t *testing.T) {
	h := newHarness(t, withPolicy(makePod(corev1.RestartPolicyNever, nil, "main"), "main", corev1.ContainerRestartPolicyOnFailure))
	h.nextStart("main").exit(2)
	h.nextStart("main").exit(0)
	got := h.waitPod("Succeeded", phaseIs(corev1.PodSucceeded))
	if st := got.Status.ContainerStatuses[0]; st.RestartCount != 1 || st.LastTerminationState.Terminated.ExitCode != 2 {
		t.Errorf("status %+v", st)
	}
}

// TestContainerNeverInAlwaysPod: a container with restartPolicy Never is not
// restarted in an Always pod; the pod fails once nothing else runs.
func TestContainerNeverInAlwaysPod(t *testing.T) {
	h := newHarness(t, withPolicy(makePod(corev1.RestartPolicyAlways, nil, "main"), "main", corev1.ContainerRestartPolicyNever))
	h.nextStart("main").exit(1)
	got := h.waitPod("Failed", phaseIs(corev1.PodFailed))
	h.noStart()
	if st := got.Status.ContainerStatuses[0]; st.RestartCount != 0 || st.State.Terminated.ExitCode != 1 {
		t.Errorf("status %+v", st)
	}
}

// TestContainerAlwaysInNeverPod: restartPolicy Always restarts after a
// success too.
func TestContainerAlwaysInNeverPod(t *testing.T) {
	h := newHarness(t, withPolicy(makePod(corev1.RestartPolicyNever, nil, "main"), "main", corev1.ContainerRestartPolicyAlways))
	h.nextStart("main").exit(0)
	h.nextStart("main")
	got := h.waitPod("restarted", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].RestartCount == 1 })
	if got.Status.Phase != corev1.PodRunning {
		t.Errorf("phase %s", got.Status.Phase)
	}
}

// TestRestartRulesByExitCode: with restartPolicy Never and a rule
// "Restart on exit code In [42]", exit 42 restarts, exit 1 ends the pod.
func TestRestartRulesByExitCode(t *testing.T) {
	pod := withPolicy(makePod(corev1.RestartPolicyNever, nil, "main"), "main", corev1.ContainerRestartPolicyNever,
		rule(corev1.ContainerRestartRuleOnExitCodesOpIn, 42))
	h := newHarness(t, pod)
	h.nextStart("main").exit(42)
	h.nextStart("main").exit(1)
	got := h.waitPod("Failed", phaseIs(corev1.PodFailed))
	h.noStart()
	if st := got.Status.ContainerStatuses[0]; st.RestartCount != 1 || st.LastTerminationState.Terminated.ExitCode != 42 || st.State.Terminated.ExitCode != 1 {
		t.Errorf("status %+v", st)
	}
}

// TestInitContainerOnFailureInNeverPod: a failed regular init container with
// restartPolicy OnFailure is restarted instead of failing the pod.
func TestInitContainerOnFailureInNeverPod(t *testing.T) {
	init := initCtr("init", false)
	init.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
	h := newHarness(t, makePod(corev1.RestartPolicyNever, []corev1.Container{init}, "main"))
	h.nextStart("init").exit(1)
	h.nextStart("init").exit(0)
	h.nextStart("main").exit(0)
	got := h.waitPod("Succeeded", phaseIs(corev1.PodSucceeded))
	if st := got.Status.InitContainerStatuses[0]; st.RestartCount != 1 || st.LastTerminationState.Terminated.ExitCode != 1 {
		t.Errorf("init status %+v", st)
	}
}

// TestLivenessKillJudgedByRules: a container killed for a failed liveness
// probe is judged by the kill's exit code like any exit, as the kubelet's
// next sync does: restartPolicy Never with a rule "Restart on 143" restarts
// it after the SIGTERM, restartPolicy Never alone does not.
func TestLivenessKillJudgedByRules(t *testing.T) {
	for _, withRule := range []bool{true, false} {
		var rules []corev1.ContainerRestartRule
		if withRule {
			rules = append(rules, rule(corev1.ContainerRestartRuleOnExitCodesOpIn, 143))
		}
		pod := withPolicy(makePod(corev1.RestartPolicyAlways, nil, "main"), "main", corev1.ContainerRestartPolicyNever, rules...)
		pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"false"}}},
			PeriodSeconds: 5, FailureThreshold: 1, TimeoutSeconds: 1, SuccessThreshold: 1,
		}
		h := newHarness(t, pod)
		h.nextStart("main")
		if withRule {
			h.nextStart("main")
			got := h.waitPod("restart", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].RestartCount == 1 })
			if code := got.Status.ContainerStatuses[0].LastTerminationState.Terminated.ExitCode; code != 143 || got.Status.Phase != corev1.PodRunning {
				t.Errorf("with the rule: last exit %d, phase %s", code, got.Status.Phase)
			}
			continue
		}
		got := h.waitPod("Failed", phaseIs(corev1.PodFailed))
		h.noStart()
		if st := got.Status.ContainerStatuses[0]; st.RestartCount != 0 || st.State.Terminated == nil || st.State.Terminated.ExitCode != 143 {
			t.Errorf("without the rule: status %+v", st)
		}
	}
}
