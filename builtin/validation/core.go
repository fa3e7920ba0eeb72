package validation

import (
	"encoding/json"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// immutableMsg is upstream's answer to a change of an immutable
// ConfigMap's or Secret's content.
const immutableMsg = "field is immutable when `immutable` is set"

// ConfigMap: every key of data and binaryData is a ConfigMap key, no key
// is in both, their values total at most 1 MiB (corev1.MaxSecretSize), and
// an immutable ConfigMap keeps its content and stays immutable.
func ConfigMap(obj, old *corev1.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	if old != nil && isTrue(old.Immutable) {
		errs = append(errs, immutable(obj.Immutable, []any{obj.Data, obj.BinaryData}, []any{old.Data, old.BinaryData}, "data", "binaryData")...)
	}
	total := 0
	dataPath := field.NewPath("data")
	for key, value := range obj.Data {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(dataPath.Key(key), key, msg))
		}
		if _, dup := obj.BinaryData[key]; dup {
			errs = append(errs, field.Invalid(dataPath.Key(key), key, "duplicate of key present in binaryData"))
		}
		total += len(value)
	}
	binaryPath := field.NewPath("binaryData")
	for key, value := range obj.BinaryData {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(binaryPath.Key(key), key, msg))
		}
		total += len(value)
	}
	if total > corev1.MaxSecretSize {
		// The empty path: the error is about the whole object.
		errs = append(errs, field.TooLong(field.NewPath(""), obj, corev1.MaxSecretSize))
	}
	return errs
}

// Secret: keys as a ConfigMap's, at most 1 MiB of data, the keys and
// annotations each well-known type requires, and on update an unchanged
// type and, when immutable, unchanged data.
func Secret(obj, old *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	if old != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(obj.Type, old.Type, field.NewPath("type"))...)
		if isTrue(old.Immutable) {
			errs = append(errs, immutable(obj.Immutable, []any{obj.Data}, []any{old.Data}, "data")...)
		}
	}
	dataPath := field.NewPath("data")
	total := 0
	for key, value := range obj.Data {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(dataPath.Key(key), key, msg))
		}
		total += len(value)
	}
	if total > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}
	return append(errs, secretType(obj, dataPath)...)
}

// secretType checks what obj's type requires of its data and annotations.
func secretType(obj *corev1.Secret, dataPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	require := func(key string) {
		if _, ok := obj.Data[key]; !ok {
			errs = append(errs, field.Required(dataPath.Key(key), ""))
		}
	}
	switch obj.Type {
	case corev1.SecretTypeServiceAccountToken:
		if obj.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg:
		errs = append(errs, jsonKey(obj, dataPath, corev1.DockerConfigKey)...)
	case corev1.SecretTypeDockerConfigJson:
		errs = append(errs, jsonKey(obj, dataPath, corev1.DockerConfigJsonKey)...)
	case corev1.SecretTypeBasicAuth:
		_, user := obj.Data[corev1.BasicAuthUsernameKey]
		_, pass := obj.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			errs = append(errs, field.Required(dataPath.Key(corev1.BasicAuthUsernameKey), ""),
				field.Required(dataPath.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(obj.Data[corev1.SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(dataPath.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		require(corev1.TLSCertKey)
		require(corev1.TLSPrivateKeyKey)
	case corev1.SecretTypeOpaque, "":
	default:
		for _, msg := range validation.IsQualifiedName(string(obj.Type)) {
			errs = append(errs, field.Invalid(field.NewPath("type"), obj.Type, msg))
		}
	}
	return errs
}

// jsonKey requires data[key] to be present and hold JSON.
func jsonKey(obj *corev1.Secret, dataPath *field.Path, key string) field.ErrorList {
	value, ok := obj.Data[key]
	if !ok {
		return field.ErrorList{field.Required(dataPath.Key(key), "")}
	}
	var v map[string]any
	if err := json.Unmarshal(value, &v); err != nil {
		return field.ErrorList{field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error())}
	}
	return nil
}

// immutable is upstream's check of an update of an immutable object: it
// stays immutable, and each of the named fields keeps its value.
func immutable(nowImmutable *bool, values, olds []any, names ...string) field.ErrorList {
	var errs field.ErrorList
	if !isTrue(nowImmutable) {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableMsg))
	}
	for i, name := range names {
		if !reflect.DeepEqual(values[i], olds[i]) {
			errs = append(errs, field.Forbidden(field.NewPath(name), immutableMsg))
		}
	}
	return errs
}

func isTrue(b *bool) bool { return b != nil && *b }
