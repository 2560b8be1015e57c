package main

import "k8s.io/component-base/featuregate"

func featureName(n string) featuregate.Feature { return featuregate.Feature(n) }
