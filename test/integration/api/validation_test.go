package api

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// Messages of the CEL rules, exactly as the CRDs carry them.
const (
	msgLegacyAndRules        = "legacy policies (onSuccess/onFailure) and deletionRules cannot be used together within the same deletionStrategy"
	msgLegacyIncomplete      = "deletionStrategy requires either BOTH onSuccess and onFailure, OR the deletionRules field (cannot be empty)"
	msgConditionBoth         = "JobStatus and JobDeploymentStatus cannot be used together within the same deletion condition."
	msgConditionNeither      = "the deletion condition requires either the JobStatus or the JobDeploymentStatus field."
	msgManagedByValue        = "the managedBy field value must be either 'ray.io/kuberay-operator' or 'kueue.x-k8s.io/multikueue'"
	msgManagedByImmutable    = "the managedBy field is immutable"
	msgGcsBackendImmutable   = "gcsFaultToleranceOptions.backend is immutable"
	pathDeletionStrategy     = "spec.deletionStrategy"
	pathDeletionRuleTemplate = "spec.deletionStrategy.deletionRules[0].condition"
)

type createCase struct {
	base  string
	path  string // dot-separated path set to value ("" leaves the base alone)
	value string // YAML fragment
	// want lists fragments the rejection must contain; empty means accepted.
	want []string
	// badRequest: the rejection comes from strict decoding (BadRequest),
	// not from schema validation (Invalid).
	badRequest bool
}

// TestCreateValidation creates one object per case and checks that bad
// ones are rejected with the intended message and good ones accepted.
func TestCreateValidation(t *testing.T) {
	env := testenv.Shared(t)
	cases := map[string]createCase{
		// Seed 001, rejected example 1: legacy and rules mixed.
		"deletionStrategy: onSuccess with deletionRules": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
onSuccess:
  policy: DeleteCluster
deletionRules:
  - policy: DeleteSelf
    condition:
      jobStatus: SUCCEEDED
      ttlSeconds: 60`,
			want: []string{pathDeletionStrategy, msgLegacyAndRules},
		},
		// Seed 001, rejected example 2: legacy without onFailure.
		"deletionStrategy: onSuccess only": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
onSuccess:
  policy: DeleteCluster`,
			want: []string{pathDeletionStrategy, msgLegacyIncomplete},
		},
		// Seed 001, rejected example 3: empty strategy.
		"deletionStrategy: empty": {
			base: baseRayJob, path: pathDeletionStrategy, value: `{}`,
			want: []string{pathDeletionStrategy, msgLegacyIncomplete},
		},
		"deletionStrategy: onFailure only": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
onFailure:
  policy: DeleteNone`,
			want: []string{msgLegacyIncomplete},
		},
		"deletionStrategy: onFailure with deletionRules": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
onFailure:
  policy: DeleteNone
onSuccess:
  policy: DeleteSelf
deletionRules:
  - policy: DeleteCluster
    condition:
      jobStatus: FAILED`,
			want: []string{msgLegacyAndRules},
		},
		"deletionStrategy: empty deletionRules": {
			base: baseRayJob, path: pathDeletionStrategy, value: `deletionRules: []`,
			want: []string{"spec.deletionStrategy.deletionRules", "should have at least 1 items"},
		},
		"deletionStrategy: legacy with both policies": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
onSuccess:
  policy: DeleteSelf
onFailure:
  policy: DeleteNone`,
		},
		"deletionStrategy: legacy with an unknown policy": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
onSuccess:
  policy: DeleteEverything
onFailure:
  policy: DeleteNone`,
			want: []string{"spec.deletionStrategy.onSuccess.policy", `Unsupported value: "DeleteEverything"`},
		},
		"deletionRules: jobStatus and jobDeploymentStatus together": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
deletionRules:
  - policy: DeleteCluster
    condition:
      jobStatus: FAILED
      jobDeploymentStatus: Failed`,
			want: []string{pathDeletionRuleTemplate, msgConditionBoth},
		},
		"deletionRules: neither jobStatus nor jobDeploymentStatus": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
deletionRules:
  - policy: DeleteCluster
    condition:
      ttlSeconds: 30`,
			want: []string{pathDeletionRuleTemplate, msgConditionNeither},
		},
		"deletionRules: non-terminal jobStatus": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
deletionRules:
  - policy: DeleteCluster
    condition:
      jobStatus: RUNNING`,
			want: []string{"jobStatus", `Unsupported value: "RUNNING"`},
		},
		"deletionRules: jobDeploymentStatus other than Failed": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
deletionRules:
  - policy: DeleteCluster
    condition:
      jobDeploymentStatus: Complete`,
			want: []string{"jobDeploymentStatus", `Unsupported value: "Complete"`},
		},
		"deletionRules: negative ttlSeconds": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
deletionRules:
  - policy: DeleteCluster
    condition:
      jobStatus: SUCCEEDED
      ttlSeconds: -1`,
			want: []string{"ttlSeconds", "should be greater than or equal to 0"},
		},
		"deletionRules: unknown policy": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
deletionRules:
  - policy: Shred
    condition:
      jobStatus: SUCCEEDED`,
			want: []string{"policy", `Unsupported value: "Shred"`},
		},
		"deletionRules: missing condition": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
deletionRules:
  - policy: DeleteSelf`,
			want: []string{"condition", "Required value"},
		},
		"deletionRules: valid stages": {
			base: baseRayJob, path: pathDeletionStrategy,
			value: `
deletionRules:
  - policy: DeleteWorkers
    condition:
      jobStatus: SUCCEEDED
  - policy: DeleteSelf
    condition:
      jobStatus: FAILED
      ttlSeconds: 600
  - policy: DeleteCluster
    condition:
      jobDeploymentStatus: Failed
      ttlSeconds: 60`,
		},
		"RayJob: managedBy other value": {
			base: baseRayJob, path: "spec.managedBy", value: `example.com/other`,
			want: []string{"spec.managedBy", msgManagedByValue},
		},
		"RayJob: managedBy multikueue": {
			base: baseRayJob, path: "spec.managedBy", value: `kueue.x-k8s.io/multikueue`,
		},
		"RayJob: preRunningDeadlineSeconds zero": {
			base: baseRayJob, path: "spec.preRunningDeadlineSeconds", value: `0`,
			want: []string{"spec.preRunningDeadlineSeconds", "should be greater than or equal to 1"},
		},
		"RayJob: preRunningDeadlineSeconds positive": {
			base: baseRayJob, path: "spec.preRunningDeadlineSeconds", value: `1`,
		},
		"RayCluster: managedBy other value": {
			base: baseRayCluster, path: "spec.managedBy", value: `ray.io/someone-else`,
			want: []string{"spec.managedBy", msgManagedByValue},
		},
		"RayCluster: managedBy kuberay operator": {
			base: baseRayCluster, path: "spec.managedBy", value: `ray.io/kuberay-operator`,
		},
		"RayCluster: idleTerminationOptions": {
			base: baseRayCluster, path: "spec.idleTerminationOptions", value: `{policy: Delete, timeoutSeconds: 600}`,
		},
		"RayCluster: idleTerminationOptions unknown policy": {
			base: baseRayCluster, path: "spec.idleTerminationOptions", value: `{policy: Hibernate, timeoutSeconds: 600}`,
			want: []string{"spec.idleTerminationOptions.policy", `Unsupported value: "Hibernate"`},
		},
		"RayCluster: idleTerminationOptions zero timeout": {
			base: baseRayCluster, path: "spec.idleTerminationOptions", value: `{policy: Suspend, timeoutSeconds: 0}`,
			want: []string{"spec.idleTerminationOptions.timeoutSeconds", "should be greater than or equal to 1"},
		},
		"RayCluster: rolling update": {
			base: baseRayCluster, path: "spec.upgradeStrategy", value: `{type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: "25%"}}`,
		},
		"RayCluster: unknown upgrade type": {
			base: baseRayCluster, path: "spec.upgradeStrategy", value: `type: Rolling`,
			want: []string{"spec.upgradeStrategy.type", `Unsupported value: "Rolling"`},
		},
		"RayCluster: unknown auth mode": {
			base: baseRayCluster, path: "spec.authOptions", value: `mode: basic`,
			want: []string{"spec.authOptions.mode", `Unsupported value: "basic"`},
		},
		"RayCluster: unknown upscaling mode": {
			base: baseRayCluster, path: "spec.autoscalerOptions", value: `upscalingMode: Fast`,
			want: []string{"spec.autoscalerOptions.upscalingMode", `Unsupported value: "Fast"`},
		},
		"RayCluster: unknown autoscaler version": {
			base: baseRayCluster, path: "spec.autoscalerOptions", value: `version: v3`,
			want: []string{"spec.autoscalerOptions.version", `Unsupported value: "v3"`},
		},
		"RayCluster: unknown GCS backend": {
			base: baseRayCluster, path: "spec.gcsFaultToleranceOptions", value: `backend: etcd`,
			want: []string{"spec.gcsFaultToleranceOptions.backend", `Unsupported value: "etcd"`},
		},
		"RayCluster: worker group without groupName": {
			base: baseRayCluster, path: "spec.workerGroupSpecs",
			value: `
- minReplicas: 0
  maxReplicas: 1
  template: {}`,
			want: []string{"spec.workerGroupSpecs[0].groupName", "Required value"},
		},
		"RayCluster: missing headGroupSpec": {
			base: baseRayCluster, path: "spec", value: `rayVersion: "2.52.0"`,
			want: []string{"spec.headGroupSpec", "Required value"},
		},
		"RayService: managedBy other value": {
			base: baseRayService, path: "spec.managedBy", value: `someone`,
			want: []string{"spec.managedBy", msgManagedByValue},
		},
		"RayService: negative rayClusterDeletionDelaySeconds": {
			base: baseRayService, path: "spec.rayClusterDeletionDelaySeconds", value: `-1`,
			want: []string{"spec.rayClusterDeletionDelaySeconds", "should be greater than or equal to 0"},
		},
		"RayService: incremental upgrade without required options": {
			base: baseRayService, path: "spec.upgradeStrategy",
			value: `
type: NewClusterWithIncrementalUpgrade
clusterUpgradeOptions:
  maxSurgePercent: 50`,
			want: []string{
				"spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName",
				"spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent",
				"spec.upgradeStrategy.clusterUpgradeOptions.intervalSeconds",
				"Required value",
			},
		},
		"RayService: missing rayClusterConfig": {
			base: baseRayService, path: "spec", value: `serveConfigV2: ""`,
			want: []string{"spec.rayClusterConfig", "Required value"},
		},
		"RayCronJob: empty timeZone": {
			base: baseRayCronJob, path: "spec.timeZone", value: `""`,
			want: []string{"spec.timeZone", "should be at least 1 chars long"},
		},
		"RayCronJob: missing schedule": {
			base: baseRayCronJob, path: "spec",
			value: `
jobTemplate:
  entrypoint: python -c "print(1)"`,
			want: []string{"spec.schedule", "Required value"},
		},
		"RayCronJob: deletion rules in the job template are checked too": {
			base: baseRayCronJob, path: "spec.jobTemplate.deletionStrategy", value: `{}`,
			want: []string{"spec.jobTemplate.deletionStrategy", msgLegacyIncomplete},
		},
		"RayCronJob: unknown concurrencyPolicy": {
			base: baseRayCronJob, path: "spec.concurrencyPolicy", value: `Sometimes`,
			want: []string{"spec.concurrencyPolicy", `Unsupported value: "Sometimes"`, `"Allow", "Forbid", "Replace"`},
		},
		"RayCronJob: negative startingDeadlineSeconds": {
			base: baseRayCronJob, path: "spec.startingDeadlineSeconds", value: `-1`,
			want: []string{"spec.startingDeadlineSeconds", "startingDeadlineSeconds must be a non-negative number of seconds"},
		},
		"RayCronJob: negative successfulJobsHistoryLimit": {
			base: baseRayCronJob, path: "spec.successfulJobsHistoryLimit", value: `-1`,
			want: []string{"spec.successfulJobsHistoryLimit", "successfulJobsHistoryLimit must be a non-negative number of RayJobs"},
		},
		"RayCronJob: negative failedJobsHistoryLimit": {
			base: baseRayCronJob, path: "spec.failedJobsHistoryLimit", value: `-2`,
			want: []string{"spec.failedJobsHistoryLimit", "failedJobsHistoryLimit must be a non-negative number of RayJobs"},
		},
		"RayCronJob: batch/v1 fields at their edges are accepted": {
			base: baseRayCronJob, path: "spec",
			value: `
schedule: "@hourly"
concurrencyPolicy: Forbid
startingDeadlineSeconds: 0
successfulJobsHistoryLimit: 0
failedJobsHistoryLimit: 0
jobTemplate:
  entrypoint: python -c "print(1)"
  clusterSelector:
    ray.io/cluster: shared`,
		},
		"RayCronJob: a schedule with TZ is stored (the operator rejects it, as KubeRay's)": {
			base: baseRayCronJob, path: "spec.schedule", value: `"CRON_TZ=UTC 0 * * * *"`,
		},
		"unknown field is rejected under strict validation": {
			base: baseRayJob, path: "spec.entrypointNumCPUs", value: `1`,
			want:       []string{`unknown field "spec.entrypointNumCPUs"`},
			badRequest: true,
		},
	}
	ns := env.Namespace(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := decodeOne(t, tc.base)
			obj.SetNamespace(ns)
			obj.SetName("")
			obj.SetGenerateName("v-")
			if tc.path != "" {
				set(t, obj, tc.path, tc.value)
			}
			err := env.Client.Create(t.Context(), obj, strict)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("want accepted, got %v", err)
				}
				return
			}
			if tc.badRequest {
				wantBadRequest(t, err, tc.want...)
				return
			}
			wantInvalid(t, err, tc.want...)
		})
	}
}

type updateCase struct {
	base   string
	path   string
	before string
	after  string
	want   []string
}

// TestUpdateValidation creates an object, changes one field and checks the
// transition rules (immutability) on update.
func TestUpdateValidation(t *testing.T) {
	env := testenv.Shared(t)
	const kuberay, multikueue = `ray.io/kuberay-operator`, `kueue.x-k8s.io/multikueue`
	cases := map[string]updateCase{
		"RayCluster: managedBy changed": {
			base: baseRayCluster, path: "spec.managedBy", before: kuberay, after: multikueue,
			want: []string{"spec.managedBy", msgManagedByImmutable},
		},
		"RayCluster: managedBy changed the other way": {
			base: baseRayCluster, path: "spec.managedBy", before: multikueue, after: kuberay,
			want: []string{"spec.managedBy", msgManagedByImmutable},
		},
		"RayCluster: managedBy rewritten unchanged": {
			base: baseRayCluster, path: "spec.managedBy", before: multikueue, after: multikueue,
		},
		"RayJob: managedBy changed": {
			base: baseRayJob, path: "spec.managedBy", before: kuberay, after: multikueue,
			want: []string{"spec.managedBy", msgManagedByImmutable},
		},
		"RayJob: managedBy rewritten unchanged": {
			base: baseRayJob, path: "spec.managedBy", before: kuberay, after: kuberay,
		},
		"RayService: managedBy changed": {
			base: baseRayService, path: "spec.managedBy", before: multikueue, after: kuberay,
			want: []string{"spec.managedBy", msgManagedByImmutable},
		},
		"RayCluster: GCS backend changed": {
			base: baseRayCluster, path: "spec.gcsFaultToleranceOptions.backend", before: `redis`, after: `rocksdb`,
			want: []string{"spec.gcsFaultToleranceOptions.backend", msgGcsBackendImmutable},
		},
		"RayCluster: other fields stay mutable": {
			base: baseRayCluster, path: "spec.suspend", before: `false`, after: `true`,
		},
	}
	ns := env.Namespace(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := decodeOne(t, tc.base)
			obj.SetNamespace(ns)
			obj.SetName("")
			obj.SetGenerateName("u-")
			set(t, obj, tc.path, tc.before)
			if err := env.Client.Create(t.Context(), obj, strict); err != nil {
				t.Fatalf("creating: %v", err)
			}
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(obj.GroupVersionKind())
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), got); err != nil {
				t.Fatalf("reading back: %v", err)
			}
			set(t, got, tc.path, tc.after)
			err := env.Client.Update(t.Context(), got, strict)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("want update accepted, got %v", err)
				}
				return
			}
			wantInvalid(t, err, tc.want...)
		})
	}
}
