// Package admissionbench measures what dynamic admission
// (ValidatingAdmissionPolicy, MutatingAdmissionPolicy and the admission
// webhooks) costs a create: Databases created through the generated
// clientset against real in-process servers, with the plugins off, on
// with nothing configured, with policies and with a webhook on loopback.
// It lives outside server/ because it uses the example kinds' generated
// code, which server/ never imports.
package admissionbench
