// Command gotypes writes what this project needs to reproduce upstream's pod template hash
// (pkg/controller.ComputeHash, a go-spew dump of the Go structs) without Go: the layout of every
// Go type reachable from core/v1 PodTemplateSpec, and, for sample templates, upstream's own dump
// and hash, and the DaemonSet revision data and revision hash, which the unit tests compare against.
//
//	hack/gotypes/run.sh schema > workflows/common/go-types/pod-template-spec.json
//	hack/gotypes/run.sh golden < test/unit/fixtures/pod-templates.json > test/unit/fixtures/pod-template-hashes.json
//
// run.sh builds it against hack/k8s/go.mod, which pins the k8s.io/kubernetes the manager matches.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/history"
)

// Field is one struct field in declaration order, as the dump prints it.
type Field struct {
	Name string `json:"name"`
	// JSON is the field's key in the API's JSON; empty when it has none (unexported, or a type
	// whose JSON form is not its fields, such as resource.Quantity's internals).
	JSON string `json:"json,omitempty"`
	// Inline fields read their values from the enclosing JSON object.
	Inline bool   `json:"inline,omitempty"`
	Type   string `json:"type"`
}

// Type is a Go type as reflect names it (Type.String()), which is what the dump prints.
type Type struct {
	Kind   string  `json:"kind"`
	Elem   string  `json:"elem,omitempty"`
	Key    string  `json:"key,omitempty"`
	Fields []Field `json:"fields,omitempty"`
	// Special names the types whose JSON is not their Go layout: quantity, time, intOrString.
	Special string `json:"special,omitempty"`
}

var specials = map[string]string{
	"k8s.io/apimachinery/pkg/api/resource.Quantity":   "quantity",
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":       "time",
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString": "intOrString",
}

func fullName(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

type walker struct {
	types map[string]Type
	pkgs  map[string]string // Type.String() -> package path, to catch two types printing alike
	// inside a special type the JSON keys are the Go names, filled in by the TypeScript side
	inSpecial int
}

func (w *walker) visit(t reflect.Type) string {
	name := t.String()
	if prev, ok := w.pkgs[name]; ok {
		if prev != t.PkgPath() {
			panic(fmt.Sprintf("two types print as %s: %s and %s", name, prev, t.PkgPath()))
		}
		if _, done := w.types[name]; done {
			return name
		}
	}
	w.pkgs[name] = t.PkgPath()
	info := Type{}
	switch t.Kind() {
	case reflect.Ptr:
		info.Kind = "ptr"
		w.types[name] = info
		info.Elem = w.visit(t.Elem())
	case reflect.Slice:
		info.Kind = "slice"
		w.types[name] = info
		info.Elem = w.visit(t.Elem())
	case reflect.Map:
		info.Kind = "map"
		w.types[name] = info
		info.Key = w.visit(t.Key())
		info.Elem = w.visit(t.Elem())
	case reflect.Struct:
		info.Kind = "struct"
		info.Special = specials[fullName(t)]
		w.types[name] = info
		if info.Special != "" {
			w.inSpecial++
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			key, opts, _ := strings.Cut(tag, ",")
			field := Field{Name: f.Name, Type: w.visit(f.Type)}
			switch {
			case w.inSpecial > 0:
				field.JSON = f.Name
			case strings.Contains(opts, "inline") || (f.Anonymous && tag == ""):
				field.Inline = true
			case key == "-" || !f.IsExported():
			case key == "":
				field.JSON = f.Name
			default:
				field.JSON = key
			}
			info.Fields = append(info.Fields, field)
		}
		if info.Special != "" {
			w.inSpecial--
		}
	case reflect.String:
		info.Kind = "string"
	case reflect.Bool:
		info.Kind = "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		info.Kind = "int"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		info.Kind = "uint"
	case reflect.Float32, reflect.Float64:
		info.Kind = "float"
	case reflect.Interface:
		info.Kind = "interface"
	default:
		panic(fmt.Sprintf("%s: kind %s not handled", name, t.Kind()))
	}
	w.types[name] = info
	return name
}

// Golden is upstream's dump and hash of one sample template, after the same protobuf round trip
// the manager's informer objects take.
type Golden struct {
	Dump               string `json:"dump"`
	Hash               string `json:"hash"`
	HashWithCollision3 string `json:"hashWithCollision3"`
	// the revision data a DaemonSet with this template gets (its controller's getPatch), and
	// history.HashControllerRevision of it
	DaemonSetPatch     string `json:"daemonSetPatch"`
	RevisionHash       string `json:"revisionHash"`
	RevisionHashProbe3 string `json:"revisionHashProbe3"`
}

// daemonSetPatch follows the steps of the daemon controller's getPatch: the DaemonSet as JSON,
// back into a map, its template alone marked to replace.
func daemonSetPatch(t corev1.PodTemplateSpec) []byte {
	b, err := json.Marshal(appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: t}})
	must(err)
	var raw map[string]interface{}
	must(json.Unmarshal(b, &raw))
	template := raw["spec"].(map[string]interface{})["template"].(map[string]interface{})
	template["$patch"] = "replace"
	patch, err := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"template": template}})
	must(err)
	return patch
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gotypes schema|golden")
		os.Exit(2)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	switch os.Args[1] {
	case "schema":
		w := &walker{types: map[string]Type{}, pkgs: map[string]string{}}
		root := w.visit(reflect.TypeOf(corev1.PodTemplateSpec{}))
		must(enc.Encode(map[string]any{"root": root, "types": w.types}))
	case "golden":
		var templates []json.RawMessage
		must(json.NewDecoder(os.Stdin).Decode(&templates))
		out := []Golden{}
		for _, raw := range templates {
			var t corev1.PodTemplateSpec
			must(json.Unmarshal(raw, &t))
			// kube-controller-manager reads objects as protobuf: decode what the wire would carry
			data, err := t.Marshal()
			must(err)
			var wire corev1.PodTemplateSpec
			must(wire.Unmarshal(data))
			three := int32(3)
			patch := daemonSetPatch(wire)
			cr := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: patch}}
			out = append(out, Golden{
				Dump:               dump.ForHash(wire),
				Hash:               controller.ComputeHash(&wire, nil),
				HashWithCollision3: controller.ComputeHash(&wire, &three),
				DaemonSetPatch:     string(patch),
				RevisionHash:       history.HashControllerRevision(cr, nil),
				RevisionHashProbe3: history.HashControllerRevision(cr, &three),
			})
		}
		must(enc.Encode(out))
	default:
		fmt.Fprintln(os.Stderr, "usage: gotypes schema|golden")
		os.Exit(2)
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
