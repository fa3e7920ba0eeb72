package reviews

import (
	"maps"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// selfSubjectReview tells the request's user who the server thinks they
// are. The body's content is ignored: the answer is a new review, stamped
// with the time it was made, as kube-apiserver's.
func (h *Handler) selfSubjectReview(r *http.Request) (*authenticationv1.SelfSubjectReview, error) {
	u, ok := request.UserFrom(r.Context())
	if !ok {
		return nil, noUser
	}
	info := authenticationv1.UserInfo{
		Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(),
		Extra: make(map[string]authenticationv1.ExtraValue, len(u.GetExtra())),
	}
	for k, v := range maps.All(u.GetExtra()) {
		info.Extra[k] = v
	}
	return &authenticationv1.SelfSubjectReview{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(h.now())},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: info},
	}, nil
}
