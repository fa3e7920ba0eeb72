package validation

import (
	"fmt"
	"regexp"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// The CEL expressions of webhooks' match conditions and of admission
// policies are compiled when they are written, with k8s.io/apiserver's
// admission compilers (the ones its admission plugins evaluate them
// with), so that an expression that does not parse, does not type-check
// or has the wrong result type is a 422 naming it, as in kube-apiserver.

// storedExpressions are the expressions of the stored object an update
// replaces, by the field they sit in: an expression kept unchanged is
// compiled in the environment of stored expressions, which has the
// libraries of newer releases too, so that a rollback does not make a
// stored object invalid. The zero value (a create) has none.
type storedExpressions struct {
	matchConditions, validations, messageExpressions, auditAnnotations, applyConfigurations sets.Set[string]
}

// newStoredExpressions is an empty storedExpressions to fill.
func newStoredExpressions() storedExpressions {
	return storedExpressions{sets.New[string](), sets.New[string](), sets.New[string](), sets.New[string](), sets.New[string]()}
}

// envType is the environment an expression compiles in: stored's when
// the stored object had it, else that of new expressions.
func envType(stored bool) environment.Type {
	if stored {
		return environment.StoredExpressions
	}
	return environment.NewExpressions
}

var (
	statelessOnce     sync.Once
	statelessCompiler plugincel.Compiler
)

// stateless is the compiler of expressions that cannot refer to a
// policy's variables (match conditions, and a policy without variables),
// built once: its environments are costly.
func stateless() plugincel.Compiler {
	statelessOnce.Do(func() {
		statelessCompiler = plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	})
	return statelessCompiler
}

// newCompiler is the compiler of one policy's expressions: when
// composition is allowed (the policy has variables, or is a mutating one)
// a composited compiler, which remembers each variable compiled so that
// later expressions may use variables.<name>.
func newCompiler(composition bool) plugincel.Compiler {
	if !composition {
		return stateless()
	}
	c, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil { // not expected; upstream falls back the same way
		return plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	}
	return c
}

// celError is a compilation error as upstream reports it at path: a
// required or invalid value (the expression, with the compiler's detail),
// else an internal error.
func celError(path *field.Path, expr plugincel.ExpressionAccessor, err *apiservercel.Error) *field.Error {
	switch err.Type {
	case apiservercel.ErrorTypeRequired:
		return field.Required(path, err.Detail)
	case apiservercel.ErrorTypeInvalid:
		return field.Invalid(path, expr.GetExpression(), err.Detail)
	case apiservercel.ErrorTypeInternal:
		return field.InternalError(path, err)
	}
	return field.InternalError(path, fmt.Errorf("unsupported error type: %w", err))
}

// compile compiles expr with c and returns its error at path, if any.
func compile(c plugincel.Compiler, expr plugincel.ExpressionAccessor, vars plugincel.OptionalVariableDeclarations, stored bool, path *field.Path) field.ErrorList {
	if r := c.CompileCELExpression(expr, vars, envType(stored)); r.Error != nil {
		return field.ErrorList{celError(path, expr, r.Error)}
	}
	return nil
}

// compileMatchCondition compiles a match condition (a bool), with params
// when a policy has a paramKind, and the authorizer.
func compileMatchCondition(expr string, params, stored bool, path *field.Path) field.ErrorList {
	return compile(stateless(), &matchconditions.MatchCondition{Expression: expr},
		plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true}, stored, path)
}

// compileValidation compiles a validation's expression (a bool).
func compileValidation(c plugincel.Compiler, expr string, params, stored bool, path *field.Path) field.ErrorList {
	return compile(c, &validatingpolicy.ValidationCondition{Expression: expr},
		plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true}, stored, path)
}

// compileMessage compiles a validation's messageExpression (a string),
// which has no authorizer.
func compileMessage(c plugincel.Compiler, expr string, params, stored bool, path *field.Path) field.ErrorList {
	return compile(c, &validatingpolicy.MessageExpressionCondition{MessageExpression: expr},
		plugincel.OptionalVariableDeclarations{HasParams: params}, stored, path)
}

// compileAuditAnnotation compiles an audit annotation's valueExpression
// (a string or null); its invalid value is raw, the expression as sent.
func compileAuditAnnotation(c plugincel.Compiler, expr, raw string, params, stored bool, path *field.Path) field.ErrorList {
	r := c.CompileCELExpression(&validatingpolicy.AuditAnnotationCondition{ValueExpression: expr},
		plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true}, envType(stored))
	switch {
	case r.Error == nil:
		return nil
	case r.Error.Type == apiservercel.ErrorTypeRequired:
		return field.ErrorList{field.Required(path, r.Error.Detail)}
	case r.Error.Type == apiservercel.ErrorTypeInvalid:
		return field.ErrorList{field.Invalid(path, raw, r.Error.Detail)}
	}
	return field.ErrorList{field.InternalError(path, r.Error)}
}

// compileVariable compiles a variable and, in a composited compiler,
// stores it for the expressions after it.
func compileVariable(c plugincel.Compiler, name, expr string, params, stored bool, path *field.Path) field.ErrorList {
	cc, ok := c.(*plugincel.CompositedCompiler)
	if !ok {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("variable composition is not allowed"))}
	}
	v := &validatingpolicy.Variable{Name: name, Expression: expr}
	if r := cc.CompileAndStoreVariable(v, plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true}, envType(stored)); r.Error != nil {
		return field.ErrorList{celError(path.Child("expression"), v, r.Error)}
	}
	return nil
}

// compileMutation compiles a mutating policy's applyConfiguration (an
// Object) or JSON patch (a list of JSONPatch) expression, which may use
// the patch types.
func compileMutation(c plugincel.Compiler, expr plugincel.ExpressionAccessor, params, stored bool, path *field.Path) field.ErrorList {
	return compile(c, expr, plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true, HasPatchTypes: true}, stored, path)
}

// applyConfiguration and jsonPatch are the accessors of a mutation's
// expression.
func applyConfiguration(expr string) plugincel.ExpressionAccessor {
	return &patch.ApplyConfigurationCondition{Expression: expr}
}

func jsonPatch(expr string) plugincel.ExpressionAccessor {
	return &patch.JSONPatchCondition{Expression: expr}
}

// celIdent is a CEL identifier; celReserved the words that cannot be one.
var (
	celIdent    = regexp.MustCompile("^[_a-zA-Z][_a-zA-Z0-9]*$")
	celReserved = sets.New("true", "false", "null", "in", "as", "break", "const", "continue", "else",
		"for", "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while")
)

// isCELIdentifier reports whether name can name a variable.
func isCELIdentifier(name string) bool {
	return celIdent.MatchString(name) && !celReserved.Has(name)
}
