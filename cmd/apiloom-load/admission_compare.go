package main

import (
	"fmt"
	"time"
)

// admissionRows are the admission scenario's lines of a run's summary:
// each round, then, when a round was repeated, each configuration's
// rounds pooled; with ratios to the first configuration's pooled figures.
func admissionRows(a *admissionResult) [][2]string {
	names := a.names()
	var first *admissionRound
	if len(names) > 0 {
		first, _ = a.pooled(names[0])
	}
	line := func(r *admissionRound) string {
		s := fmt.Sprintf("%d created at %.0f/s, server CPU %s per create", r.Created, r.CreateRate, us(r.CPUPerCreate))
		if first != nil && r.Created > 0 && first.CPUPerCreate > 0 && first.CreateRate > 0 {
			s += fmt.Sprintf(" (×%.2f rate, ×%.2f CPU of %s)", r.CreateRate/first.CreateRate, ratio(r.CPUPerCreate, first.CPUPerCreate), first.Name)
		}
		if r.Webhook {
			s += fmt.Sprintf("; webhook %d calls, load generator CPU %.2fs", r.WebhookCalls, r.LoadGenCPU.Seconds())
		}
		if r.Error != "" {
			s += "; " + r.Error
		}
		return s
	}
	rows := [][2]string{{"admission", fmt.Sprintf("%d creates a round with %d creators", a.Creates, a.Creators)}}
	for i := range a.Rounds {
		rows = append(rows, [2]string{"  " + a.Rounds[i].Name, line(&a.Rounds[i])})
	}
	if len(names) < len(a.Rounds) {
		for _, name := range names {
			if p, ok := a.pooled(name); ok {
				rows = append(rows, [2]string{"  all " + name, line(p)})
			}
		}
	}
	return rows
}

// names are the rounds' distinct names, in the order they first ran.
func (a *admissionResult) names() []string {
	var names []string
	seen := map[string]bool{}
	for _, x := range a.Rounds {
		if !seen[x.Name] {
			seen[x.Name] = true
			names = append(names, x.Name)
		}
	}
	return names
}

// pooled adds up the rounds called name that created anything: their
// creates over their time, their CPU over their creates. False if none did.
func (a *admissionResult) pooled(name string) (*admissionRound, bool) {
	var p *admissionRound
	for _, x := range a.Rounds {
		if x.Name != name || x.Created == 0 {
			continue
		}
		if p == nil {
			p = &admissionRound{Name: x.Name, Policies: x.Policies, Webhook: x.Webhook}
		}
		p.Created += x.Created
		p.CreateTime += x.CreateTime
		p.CPU.add(x.CPU)
		p.LoadGenCPU += x.LoadGenCPU
		p.WebhookCalls += x.WebhookCalls
	}
	if p == nil {
		return nil, false
	}
	p.CreateRate = float64(p.Created) / p.CreateTime.Seconds()
	p.CPUPerCreate = p.CPU.Total / time.Duration(p.Created)
	return p, true
}

// admissionRoundOf returns the run's rounds called name pooled, if any
// created anything.
func admissionRoundOf(r *result, name string) (*admissionRound, bool) {
	if r.Admission == nil {
		return nil, false
	}
	return r.Admission.pooled(name)
}

// admissionMetrics are the comparison rows of the admission rounds, by
// round name; and each round of every run against the first round of
// the first run (its "none", pooled, or a run without dynamic admission), so
// that `TARGETS="apiloom-noadmission apiloom"` reads as ratios to no
// admission at all.
func admissionMetrics(runs []*result) []metric {
	var names []string
	seen := map[string]bool{}
	for _, r := range runs {
		if r.Admission == nil {
			continue
		}
		for _, name := range r.Admission.names() {
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	var ref *admissionRound
	if len(runs) > 0 && runs[0].Admission != nil && len(runs[0].Admission.Rounds) > 0 {
		ref, _ = runs[0].Admission.pooled(runs[0].Admission.Rounds[0].Name)
	}
	var out []metric
	for _, name := range names {
		row := func(what, format string, f func(*admissionRound) (float64, bool)) metric {
			return metric{"admission " + name + " " + what, func(r *result) (float64, bool) {
				x, ok := admissionRoundOf(r, name)
				if !ok {
					return 0, false
				}
				return f(x)
			}, format}
		}
		out = append(out,
			row("creates/s", "%.0f", func(x *admissionRound) (float64, bool) { return x.CreateRate, true }),
			row("server CPU µs/create", "%.0f", func(x *admissionRound) (float64, bool) { return usOf(x.CPUPerCreate), true }))
		if ref != nil {
			refName := runs[0].Label + " " + ref.Name
			out = append(out,
				row("creates/s ÷ "+refName, "%.2f", func(x *admissionRound) (float64, bool) { return x.CreateRate / ref.CreateRate, ref.CreateRate > 0 }),
				row("CPU/create ÷ "+refName, "%.2f", func(x *admissionRound) (float64, bool) {
					return ratio(x.CPUPerCreate, ref.CPUPerCreate), ref.CPUPerCreate > 0
				}))
		}
	}
	return out
}
