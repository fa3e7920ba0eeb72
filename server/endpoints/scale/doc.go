// Package scale owns the scale subresource's model (.../{name}/scale):
// where a resource's replicas and selector live, the autoscaling/v1 Scale
// of an object, the checks of its scale fields, how a Scale written back
// sets the object, the field manager of Scales, and a Scale's Table. It is
// apart from the REST handlers because none of this depends on a request;
// the handlers keep the verbs (GET, PUT, PATCH) and the object's update
// rules.
package scale
