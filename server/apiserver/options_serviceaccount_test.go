package apiserver

import (
	"strings"
	"testing"
	"time"
)

func TestServiceAccountOptions(t *testing.T) {
	o := DefaultOptions()
	if got := o.serviceAccountIssuers(); len(got) != 1 || got[0] != defaultServiceAccountIssuer {
		t.Fatalf("default issuers %v", got)
	}
	if got := o.apiAudiences(); len(got) != 1 || got[0] != defaultServiceAccountIssuer {
		t.Fatalf("default audiences %v", got)
	}
	if !o.ServiceAccounts.ExtendExpiration || len(o.validateServiceAccounts()) != 0 {
		t.Fatalf("defaults: %+v %v", o.ServiceAccounts, o.validateServiceAccounts())
	}
	o.ServiceAccounts.Issuers = []string{"https://new.example", "old-name"}
	o.ServiceAccounts.APIAudiences = []string{"api"}
	if got := o.apiAudiences(); len(got) != 1 || got[0] != "api" {
		t.Fatalf("audiences %v", got)
	}
	if errs := o.validateServiceAccounts(); len(errs) != 0 {
		t.Fatalf("valid issuers refused: %v", errs)
	}
	for name, change := range map[string]func(*ServiceAccountOptions){
		"http issuer":        func(s *ServiceAccountOptions) { s.Issuers = []string{"http://insecure.example"} },
		"empty issuer":       func(s *ServiceAccountOptions) { s.Issuers = []string{""} },
		"short max":          func(s *ServiceAccountOptions) { s.MaxExpiration = 30 * time.Minute },
		"jwks uri not https": func(s *ServiceAccountOptions) { s.JWKSURI = "http://x/jwks" },
	} {
		o := DefaultOptions()
		change(&o.ServiceAccounts)
		if errs := o.validateServiceAccounts(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "service-account") {
			t.Errorf("%s: %v", name, errs)
		}
	}
}
