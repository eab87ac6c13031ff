// Package suggest answers a typo with the name the user most likely
// meant (an unknown command or flag), and only when it is close: both
// mains, loki-supervise and loki-kube, answer bad input the same way.
package suggest
