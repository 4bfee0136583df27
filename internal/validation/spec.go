package validation

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/gcsstorage"
)

// FeatureGates reports whether a feature gate is on. The operator's
// featuregate.FeatureGate satisfies it; tests pass a map.
type FeatureGates interface {
	Enabled(featuregate.Feature) bool
}

// Environment variables of the Ray container that the spec rules look at.
const (
	envRayRedisAddress           = "RAY_REDIS_ADDRESS"
	envRedisPassword             = "REDIS_PASSWORD"
	envRedisUsername             = "REDIS_USERNAME"
	envRayEnableAutoscalerV2     = "RAY_enable_autoscaler_v2"
	envKubeRayGenAutoscalerCmd   = "KUBERAY_GEN_AUTOSCALER_START_CMD"
	headGroupLabel               = "Head"
	minRayVersionForTokenAuth    = "2.52.0"
	minRayVersionForK8sTokenAuth = "2.55.0"
	rayStartParamRedisPassword   = "redis-password"
	rayStartParamRedisUsername   = "redis-username"
	rayStartParamLabels          = "labels"
)

// specRule is one check of a RayClusterSpec; the first failing rule wins.
type specRule func(c *specCheck) error

// specCheck is what every rule reads.
type specCheck struct {
	spec        *rayv1.RayClusterSpec
	annotations map[string]string
	gates       FeatureGates
}

// head returns the Ray container of the head template; rules after
// headHasContainer may rely on it.
func (c *specCheck) head() corev1.Container {
	return c.spec.HeadGroupSpec.Template.Spec.Containers[rayv1.RayContainerIndex]
}

// specRules are KubeRay's rules, in KubeRay's order, plus the uniqueness and
// syntax of worker group names (KubeRay leaves those to its webhook).
var specRules = []specRule{
	headHasContainer,
	headGroupParams,
	workerGroupNames,
	rayStartParamsSize,
	idleTermination,
	workerGroups,
	gcsFaultTolerance,
	redisUsername,
	workerGroupSuspend,
	autoscalerVersion,
	autoscalerOptions,
	historyServer,
	authOptions,
	networkPolicy,
	tlsOptions,
}

// RayClusterSpec checks a cluster spec (layer 2). annotations are the
// annotations of the object that carries the spec (RayCluster, RayJob or
// RayService), because GCS fault tolerance can be switched on by annotation.
func RayClusterSpec(spec *rayv1.RayClusterSpec, annotations map[string]string, gates FeatureGates) error {
	c := &specCheck{spec: spec, annotations: annotations, gates: gates}
	for _, rule := range specRules {
		if err := rule(c); err != nil {
			return err
		}
	}
	return nil
}

func headHasContainer(c *specCheck) error {
	if len(c.spec.HeadGroupSpec.Template.Spec.Containers) == 0 {
		return fmt.Errorf("headGroupSpec should have at least one container")
	}
	return nil
}

func headGroupParams(c *specCheck) error {
	head := &c.spec.HeadGroupSpec
	if err := groupResources(headGroupLabel, head.RayStartParams, head.Resources); err != nil {
		return err
	}
	return groupLabels(headGroupLabel, head.RayStartParams, head.Labels)
}

// MaxRayStartParamsBytes bounds the keys and values of one group's
// rayStartParams. They become one `ray start` command line, passed as a
// single argument to the container's shell and again in the environment
// (KUBERAY_GEN_RAY_START_CMD); Linux refuses to start a program with an
// argument or an environment string over 128 KiB (MAX_ARG_STRLEN on
// 4 KiB-page machines), and the API server refuses a Pod over 1.5 MiB.
// Half of 128 KiB leaves room for the flags the operator adds and the
// user's own command. (KubeRay accepts any size; such a Pod is refused, or
// its container cannot start.)
const MaxRayStartParamsBytes = 64 << 10

// rayStartParamsSize refuses rayStartParams that cannot fit on a command
// line (see MaxRayStartParamsBytes).
func rayStartParamsSize(c *specCheck) error {
	check := func(field string, params map[string]string) error {
		n := 0
		for k, v := range params {
			n += len(k) + len(v)
		}
		if n > MaxRayStartParamsBytes {
			return fmt.Errorf("%s.rayStartParams hold %d bytes of keys and values, more than %d: they become one `ray start` "+
				"command line, and Linux refuses a command-line argument over 128 KiB", field, n, MaxRayStartParamsBytes)
		}
		return nil
	}
	if err := check("headGroupSpec", c.spec.HeadGroupSpec.RayStartParams); err != nil {
		return err
	}
	for _, g := range c.spec.WorkerGroupSpecs {
		if err := check(fmt.Sprintf("workerGroupSpecs[%q]", g.GroupName), g.RayStartParams); err != nil {
			return err
		}
	}
	return nil
}

// workerGroupNames requires unique names that can be label values, since a
// group's name is its Pods' ray.io/group label and the key of its scale
// expectations, and that can be part of a Pod name (no '_', no '.' next to
// '-' or '.').
func workerGroupNames(c *specCheck) error {
	seen := make(map[string]bool, len(c.spec.WorkerGroupSpecs))
	for _, group := range c.spec.WorkerGroupSpecs {
		if group.GroupName == "" {
			return fmt.Errorf("worker group names must not be empty")
		}
		if errs := k8svalidation.IsValidLabelValue(group.GroupName); len(errs) > 0 {
			return fmt.Errorf("worker group name %q must be a valid label value: %s", group.GroupName, strings.Join(errs, "; "))
		}
		// Stricter than KubeRay, which accepts such a name and then fails to
		// create every worker Pod: the name is part of the Pods' names.
		if errs := k8svalidation.IsDNS1123Subdomain(strings.ToLower(group.GroupName)); len(errs) > 0 {
			return fmt.Errorf("worker group name %q cannot be part of its Pods' names (<cluster>-<group>-worker-<suffix>): %s",
				group.GroupName, strings.Join(errs, "; "))
		}
		if seen[group.GroupName] {
			return fmt.Errorf("worker group names must be unique: %q is used more than once", group.GroupName)
		}
		seen[group.GroupName] = true
	}
	return nil
}

func workerGroups(c *specCheck) error {
	autoscaling := autoscalingEnabled(c.spec)
	for i := range c.spec.WorkerGroupSpecs {
		group := &c.spec.WorkerGroupSpecs[i]
		if len(group.Template.Spec.Containers) == 0 {
			return fmt.Errorf("workerGroupSpec should have at least one container")
		}
		if err := replicaBounds(group, autoscaling); err != nil {
			return err
		}
		if err := groupResources(group.GroupName, group.RayStartParams, group.Resources); err != nil {
			return err
		}
		if err := groupLabels(group.GroupName, group.RayStartParams, group.Labels); err != nil {
			return err
		}
		if err := groupIdleTimeout(c, group); err != nil {
			return err
		}
		if err := groupPriority(c, group); err != nil {
			return err
		}
	}
	return nil
}

// replicaBounds checks minReplicas <= maxReplicas. A replicas value outside
// the bounds is not an error: like KubeRay, the controller clamps it, so
// that manifests KubeRay accepts stay valid.
func replicaBounds(group *rayv1.WorkerGroupSpec, autoscaling bool) error {
	if !autoscaling && (group.MinReplicas == nil || group.MaxReplicas == nil) {
		return fmt.Errorf("worker group %s must set both minReplicas and maxReplicas when autoscaling is disabled", group.GroupName)
	}
	if group.MinReplicas != nil && *group.MinReplicas < 0 {
		return fmt.Errorf("worker group %s has negative minReplicas %d", group.GroupName, *group.MinReplicas)
	}
	if group.MaxReplicas != nil && *group.MaxReplicas < 0 {
		return fmt.Errorf("worker group %s has negative maxReplicas %d", group.GroupName, *group.MaxReplicas)
	}
	if group.MinReplicas != nil && group.MaxReplicas != nil && *group.MinReplicas > *group.MaxReplicas {
		return fmt.Errorf("worker group %s has minReplicas %d greater than maxReplicas %d",
			group.GroupName, *group.MinReplicas, *group.MaxReplicas)
	}
	return nil
}

// groupResources rejects Ray resources given both as `ray start` flags and
// in the group's resources field.
func groupResources(groupName string, rayStartParams, resources map[string]string) error {
	fromParams := false
	for _, key := range []string{"num-cpus", "num-gpus", "memory", "resources"} {
		if rayStartParams[key] != "" {
			fromParams = true
		}
	}
	if fromParams && len(resources) > 0 {
		return fmt.Errorf("resource fields should not be set in both rayStartParams and Resources for %s group; please use only one", groupName)
	}
	return nil
}

// groupLabels rejects --labels in rayStartParams and label syntax errors.
func groupLabels(groupName string, rayStartParams, labels map[string]string) error {
	if _, ok := rayStartParams[rayStartParamLabels]; ok {
		return fmt.Errorf("rayStartParams['labels'] is not supported for %s group; please use the top-level Labels field instead", groupName)
	}
	var problems []string
	for _, key := range slices.Sorted(maps.Keys(labels)) {
		for _, e := range k8svalidation.IsQualifiedName(key) {
			problems = append(problems, fmt.Sprintf("invalid label key for %s group: '%s', error: %s", groupName, key, e))
		}
		for _, e := range k8svalidation.IsValidLabelValue(labels[key]) {
			problems = append(problems, fmt.Sprintf("invalid label value for key '%s' in %s group: '%s', error: %s", key, groupName, labels[key], e))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// groupIdleTimeout allows a per-group idle timeout only with autoscaler v2.
func groupIdleTimeout(c *specCheck, group *rayv1.WorkerGroupSpec) error {
	timeout := group.IdleTimeoutSeconds
	if timeout == nil {
		return nil
	}
	if *timeout < 0 {
		return fmt.Errorf("worker group %s: idleTimeoutSeconds must be non-negative, got %d", group.GroupName, *timeout)
	}
	if autoscalerV2Requested(c) {
		return nil
	}
	return fmt.Errorf("worker group %s: idleTimeoutSeconds is set, but autoscaler v2 is not enabled. "+
		"Please set .spec.autoscalerOptions.version to 'v2' (or set %s environment variable to 'true' in the head pod if using KubeRay < 1.4.0)",
		group.GroupName, envRayEnableAutoscalerV2)
}

// minRayVersionForGroupPriority is KubeRay's threshold for a worker group's
// priority. Ray's KubeRay config producer passes the field to autoscaler v2
// only from 2.59.0 (docs/dev/ray-versions.md row 21); KubeRay's 2.56.0 is kept
// so that the same manifests are admitted.
var minRayVersionForGroupPriority = version.MustParseGeneric("2.56.0")

// groupPriority allows a non-zero worker group priority only with a
// rayVersion of 2.56.0 or later and autoscaler v2, as KubeRay does.
func groupPriority(c *specCheck, group *rayv1.WorkerGroupSpec) error {
	if group.Priority == nil || *group.Priority == 0 {
		return nil
	}
	if c.spec.RayVersion == "" {
		return fmt.Errorf("worker group %s: priority is set, but RayVersion was not specified. Ray version 2.56.0 or later is required", group.GroupName)
	}
	v, err := version.ParseGeneric(c.spec.RayVersion)
	if err != nil {
		return fmt.Errorf("worker group %s: priority is set, but RayVersion format is invalid: %s, %w", group.GroupName, c.spec.RayVersion, err)
	}
	if v.LessThan(minRayVersionForGroupPriority) {
		return fmt.Errorf("worker group %s: priority is set, but minimum Ray version is 2.56.0, got %s", group.GroupName, c.spec.RayVersion)
	}
	if autoscalerV2Requested(c) {
		return nil
	}
	return fmt.Errorf("worker group %s: priority is set to %d, but autoscaler v2 is not enabled. Priority is only supported with autoscaler v2 enabled", group.GroupName, *group.Priority)
}

func gcsFaultTolerance(c *specCheck) error {
	opts := c.spec.GcsFaultToleranceOptions
	if c.annotations[rayv1.AnnotationFTEnabled] != "" && opts != nil {
		return fmt.Errorf("%s annotation and GcsFaultToleranceOptions are both set. "+
			"Please use only GcsFaultToleranceOptions to configure GCS fault tolerance", rayv1.AnnotationFTEnabled)
	}
	head := c.head()
	if !rayv1.IsGCSFaultToleranceEnabled(c.spec, c.annotations) && envExists(head.Env, envRayRedisAddress) {
		return fmt.Errorf("%s is set which implicitly enables GCS fault tolerance, "+
			"but GcsFaultToleranceOptions is not set. Please set GcsFaultToleranceOptions "+
			"to enable GCS fault tolerance", envRayRedisAddress)
	}
	if opts == nil {
		return nil
	}
	switch {
	case c.spec.HeadGroupSpec.RayStartParams[rayStartParamRedisPassword] != "":
		return fmt.Errorf("cannot set `redis-password` in rayStartParams when " +
			"GcsFaultToleranceOptions is enabled - use GcsFaultToleranceOptions.RedisPassword instead")
	case envExists(head.Env, envRedisPassword):
		return fmt.Errorf("cannot set `REDIS_PASSWORD` env var in head Pod when " +
			"GcsFaultToleranceOptions is enabled - use GcsFaultToleranceOptions.RedisPassword instead")
	case envExists(head.Env, envRayRedisAddress):
		return fmt.Errorf("cannot set `RAY_REDIS_ADDRESS` env var in head Pod when " +
			"GcsFaultToleranceOptions is enabled - use GcsFaultToleranceOptions.RedisAddress instead")
	case c.annotations[rayv1.AnnotationExternalStorageNamespace] != "":
		return fmt.Errorf("cannot set `ray.io/external-storage-namespace` annotation when " +
			"GcsFaultToleranceOptions is enabled - use GcsFaultToleranceOptions.ExternalStorageNamespace instead")
	}
	return gcsBackend(c, opts, head)
}

// gcsBackend enforces the rules of the chosen GCS storage backend.
func gcsBackend(c *specCheck, opts *rayv1.GcsFaultToleranceOptions, head corev1.Container) error {
	if opts.Backend != rayv1.GcsFTBackendRocksDB {
		if opts.Storage != nil {
			return fmt.Errorf("cannot set GcsFaultToleranceOptions.Storage when backend is 'redis' - it only applies to the 'rocksdb' backend")
		}
		return nil
	}
	if !c.gates.Enabled(features.GCSFaultToleranceEmbeddedStorage) {
		return fmt.Errorf("the embedded RocksDB GCS fault tolerance backend (GcsFaultToleranceOptions.Backend: 'rocksdb') requires the %s feature gate to be enabled",
			features.GCSFaultToleranceEmbeddedStorage)
	}
	redisOnly := []struct {
		field string
		set   bool
	}{
		{"RedisAddress", opts.RedisAddress != ""},
		{"RedisUsername", opts.RedisUsername != nil},
		{"RedisPassword", opts.RedisPassword != nil},
		{"ExternalStorageNamespace", opts.ExternalStorageNamespace != ""},
	}
	for _, f := range redisOnly {
		if f.set {
			return fmt.Errorf("cannot set GcsFaultToleranceOptions.%s when backend is 'rocksdb'", f.field)
		}
	}
	if s := opts.Storage; s != nil && s.ClaimName != "" && (s.Size != nil || s.StorageClassName != nil || len(s.AccessModes) > 0) {
		return fmt.Errorf("GcsFaultToleranceOptions.Storage.ClaimName is mutually exclusive with size, storageClassName, and accessModes")
	}
	return embeddedStorageReserved(head, c.spec.HeadGroupSpec.Template.Spec.Volumes)
}

// embeddedStorageReserved refuses a head that sets what the operator adds for
// the embedded store (its env, the gcs-storage volume, a mount at /data/gcs):
// the head Pod would get duplicates and fail.
func embeddedStorageReserved(head corev1.Container, volumes []corev1.Volume) error {
	if envExists(head.Env, gcsstorage.EnvStorage) || envExists(head.Env, gcsstorage.EnvStoragePath) {
		return fmt.Errorf("cannot set `%s` or `%s` env var in head Pod when the embedded GCS FT backend is used - these are managed by KubeRay",
			gcsstorage.EnvStorage, gcsstorage.EnvStoragePath)
	}
	for _, m := range head.VolumeMounts {
		if m.MountPath == gcsstorage.MountPath || m.Name == gcsstorage.VolumeName {
			return fmt.Errorf("cannot set a volume mount named %q or mounted at %s in the head container when the embedded GCS FT backend is used - it is managed by KubeRay",
				gcsstorage.VolumeName, gcsstorage.MountPath)
		}
	}
	for _, v := range volumes {
		if v.Name == gcsstorage.VolumeName {
			return fmt.Errorf("cannot set a volume named %q in the head Pod when the embedded GCS FT backend is used - it is managed by KubeRay", gcsstorage.VolumeName)
		}
	}
	return nil
}

func redisUsername(c *specCheck) error {
	if c.spec.HeadGroupSpec.RayStartParams[rayStartParamRedisUsername] != "" || envExists(c.head().Env, envRedisUsername) {
		return fmt.Errorf("cannot set redis username in rayStartParams or environment variables" +
			" - use GcsFaultToleranceOptions.RedisUsername instead")
	}
	return nil
}

// workerGroupSuspend: suspending a group is RayJob's DeleteWorkers policy,
// so it needs that gate, and the autoscaler cannot cope with it.
func workerGroupSuspend(c *specCheck) error {
	for _, group := range c.spec.WorkerGroupSpecs {
		if group.Suspend == nil || !*group.Suspend {
			continue
		}
		if !c.gates.Enabled(features.RayJobDeletionPolicy) {
			return fmt.Errorf("worker group %s can be suspended only when the RayJobDeletionPolicy feature gate is enabled", group.GroupName)
		}
		if autoscalingEnabled(c.spec) {
			return fmt.Errorf("worker group %s cannot be suspended with Autoscaler enabled", group.GroupName)
		}
	}
	return nil
}

// autoscalerVersion keeps the autoscaler v2 switches coherent.
func autoscalerVersion(c *specCheck) error {
	head := c.head()
	if !autoscalingEnabled(c.spec) {
		if env, ok := envVar(head.Env, envRayEnableAutoscalerV2); ok && (env.Value == "1" || env.Value == "true") {
			return fmt.Errorf("environment variable %s cannot be set to '%s' when enableInTreeAutoscaling is false. "+
				"Please set enableInTreeAutoscaling: true to use autoscaler v2", envRayEnableAutoscalerV2, env.Value)
		}
		return nil
	}
	if opts := c.spec.AutoscalerOptions; opts != nil && opts.Version != nil && envExists(head.Env, envRayEnableAutoscalerV2) {
		return fmt.Errorf("both .spec.autoscalerOptions.version and head Pod env var %s are set, please only use the former", envRayEnableAutoscalerV2)
	}
	// Only an explicit v2 is held to v2's restart policy: a version derived
	// from rayVersion must not reject manifests KubeRay accepts.
	if opts := c.spec.AutoscalerOptions; opts == nil || opts.Version == nil || *opts.Version != rayv1.AutoscalerVersionV2 {
		return nil
	}
	if p := c.spec.HeadGroupSpec.Template.Spec.RestartPolicy; p != "" && p != corev1.RestartPolicyNever {
		return fmt.Errorf("restartPolicy for head Pod should be Never or unset when using autoscaler V2")
	}
	for _, group := range c.spec.WorkerGroupSpecs {
		if p := group.Template.Spec.RestartPolicy; p != "" && p != corev1.RestartPolicyNever {
			return fmt.Errorf("restartPolicy for worker group %s should be Never or unset when using autoscaler V2", group.GroupName)
		}
	}
	return nil
}

func autoscalerOptions(c *specCheck) error {
	opts := c.spec.AutoscalerOptions
	if opts == nil {
		return nil
	}
	if opts.IdleTimeoutSeconds != nil && *opts.IdleTimeoutSeconds < 0 {
		return fmt.Errorf("autoscalerOptions.idleTimeoutSeconds must be non-negative, got %d", *opts.IdleTimeoutSeconds)
	}
	if envExists(opts.Env, envKubeRayGenAutoscalerCmd) {
		return fmt.Errorf("autoscalerOptions.env must not contain %s: "+
			"it is managed by KubeRay and injected automatically into the autoscaler container", envKubeRayGenAutoscalerCmd)
	}
	return nil
}

func historyServer(c *specCheck) error {
	opts := c.spec.HistoryServerOptions
	if opts == nil {
		return nil
	}
	if !c.gates.Enabled(features.RayClusterHistoryServer) {
		return fmt.Errorf("RayClusterHistoryServer feature gate is not enabled")
	}
	if opts.CollectorOptions == nil {
		return fmt.Errorf("historyServerOptions.collectorOptions must be set")
	}
	if opts.CollectorOptions.Image == nil || *opts.CollectorOptions.Image == "" {
		return fmt.Errorf("historyServerOptions.collectorOptions.image must be set")
	}
	return nil
}

func authOptions(c *specCheck) error {
	opts := c.spec.AuthOptions
	k8sAuth := opts != nil && opts.EnableK8sTokenAuth != nil && *opts.EnableK8sTokenAuth
	if !rayv1.IsAuthEnabled(c.spec) {
		if k8sAuth {
			return fmt.Errorf("authOptions.enableK8sTokenAuth is enabled but authOptions.mode not set to 'token'")
		}
		return nil
	}
	if c.spec.RayVersion == "" {
		return fmt.Errorf("authOptions.mode is 'token' but RayVersion was not specified. Ray version %s or later is required", minRayVersionForTokenAuth)
	}
	rayVersion, err := version.ParseGeneric(c.spec.RayVersion)
	if err != nil {
		return fmt.Errorf("authOptions.mode is 'token' but RayVersion format is invalid: %s, %w", c.spec.RayVersion, err)
	}
	if rayVersion.LessThan(version.MustParseGeneric(minRayVersionForTokenAuth)) {
		return fmt.Errorf("authOptions.mode is 'token' but minimum Ray version is %s, got %s", minRayVersionForTokenAuth, c.spec.RayVersion)
	}
	if !k8sAuth {
		return nil
	}
	if rayVersion.LessThan(version.MustParseGeneric(minRayVersionForK8sTokenAuth)) {
		return fmt.Errorf("authOptions.enableK8sTokenAuth is enabled but minimum Ray version is %s, got %s", minRayVersionForK8sTokenAuth, c.spec.RayVersion)
	}
	if opts.SecretName != nil && *opts.SecretName != "" {
		return fmt.Errorf("authOptions.enableK8sTokenAuth is enabled and authOptions.secretName is also set")
	}
	return nil
}

// RayClusterGatedFields checks only spec.networkPolicy and spec.tlsOptions
// (and the annotation choosing the certificates), the alpha fields whose
// gate must be on: the RayCluster webhook refuses them with the
// controller's messages, where KubeRay's webhook lets them through to fail
// in the controller.
func RayClusterGatedFields(spec *rayv1.RayClusterSpec, annotations map[string]string, gates FeatureGates) error {
	c := &specCheck{spec: spec, annotations: annotations, gates: gates}
	if err := networkPolicy(c); err != nil {
		return err
	}
	return tlsOptions(c)
}
