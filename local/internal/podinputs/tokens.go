package podinputs

import (
	"context"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// defaultTokenSeconds is a projected token's lifetime when the pod sets none
// (the API server's default for expirationSeconds).
const defaultTokenSeconds int64 = 3600

// maxTokenAge is how long a token is used at most before a new one is
// requested, whatever its lifetime (as a kubelet's token manager).
const maxTokenAge = 24 * time.Hour

// tokenSource requests service-account tokens and keeps each until 80 % of
// its lifetime has passed.
type tokenSource struct {
	objs   Objects
	now    time.Time
	issued map[string]*authenticationv1.TokenRequest // by volume/source index
}

func (b *contents) token(ctx context.Context, key string, p *corev1.ServiceAccountTokenProjection, mode int32, out payload) error {
	tr, err := b.tokens.get(ctx, key, b.pod, p)
	if err != nil {
		return err
	}
	out[p.Path] = file{data: []byte(tr.Status.Token), mode: fileMode(mode)}
	return nil
}

func (s *tokenSource) get(ctx context.Context, key string, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) (*authenticationv1.TokenRequest, error) {
	if tr, ok := s.issued[key]; ok && !s.due(tr) {
		return tr, nil
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(ptr.Deref(p.ExpirationSeconds, defaultTokenSeconds)),
		BoundObjectRef: &authenticationv1.BoundObjectReference{
			APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
		},
	}}
	if p.Audience != "" {
		req.Spec.Audiences = []string{p.Audience}
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	tr, err := s.objs.Token(ctx, pod.Namespace, sa, req)
	if err != nil {
		return nil, &ConfigError{Reason: ReasonCreateContainerConfigError, Err: err,
			Message: "failed to fetch token: " + err.Error()}
	}
	tr = tr.DeepCopy()
	if tr.Spec.ExpirationSeconds == nil {
		tr.Spec.ExpirationSeconds = req.Spec.ExpirationSeconds
	}
	s.issued[key] = tr
	return tr, nil
}

// due reports whether a token is past 80 % of its lifetime, or older than
// maxTokenAge.
func (s *tokenSource) due(tr *authenticationv1.TokenRequest) bool {
	exp := tr.Status.ExpirationTimestamp.Time
	ttl := time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	issuedAt := exp.Add(-ttl)
	return !s.now.Before(exp.Add(-ttl/5)) || !s.now.Before(issuedAt.Add(maxTokenAge))
}
