package apiserver

import (
	"errors"

	"github.com/spf13/pflag"
)

// EncryptionOptions configure encryption at rest (encryption.go), with
// kube-apiserver's flags and file format.
type EncryptionOptions struct {
	// ProviderConfig is an EncryptionConfiguration file
	// (apiserver.config.k8s.io/v1). Empty: with the embedded etcd, the
	// configuration generated in DataDir/pki (encryptsSecretsByDefault);
	// with --etcd-servers, no encryption.
	ProviderConfig string
	// AutomaticReload reloads ProviderConfig when its content changes.
	AutomaticReload bool
}

func (o *Options) addEncryptionFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Encryption.ProviderConfig, "encryption-provider-config", o.Encryption.ProviderConfig,
		"the EncryptionConfiguration file (kube-apiserver's format) naming the resources encrypted in etcd and their providers "+
			"(aescbc, aesgcm, secretbox, kms v2, identity); empty: with the embedded etcd, Secrets are encrypted with a key generated "+
			"on first start into <data-dir>/pki/encryption-config.yaml; with --etcd-servers, nothing is encrypted")
	fs.BoolVar(&o.Encryption.AutomaticReload, "encryption-provider-config-automatic-reload", o.Encryption.AutomaticReload,
		"reload --encryption-provider-config when its content changes (checked every minute); its KMS health checks are then one, /healthz/kms-providers")
}

func (o *Options) validateEncryption() []error {
	if o.Encryption.ProviderConfig == "" && o.Encryption.AutomaticReload {
		return []error{errors.New("--encryption-provider-config-automatic-reload must be set with --encryption-provider-config")}
	}
	return nil
}
