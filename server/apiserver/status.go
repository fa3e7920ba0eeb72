package apiserver

import (
	"encoding/json"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// writeStatus answers with err's metav1.Status, the only error body clients
// decode.
func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(&st)
}
