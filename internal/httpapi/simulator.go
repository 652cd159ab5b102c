package httpapi

import (
	"context"
	"net/http"

	"github.com/connected-vehicle/vcs/internal/api"
)

func (h *Handler) simulatorRoutes(mux *http.ServeMux) {
	b := h.cfg.BasePath + "/simulator/trip"
	route(mux, b, methods{http.MethodPost: h.authed(h.startSimulation)})
	route(mux, b+"/{id}", methods{
		http.MethodGet:    h.authed(h.getSimulation),
		http.MethodDelete: h.authed(h.cancelSimulation),
	})
}

// simulator returns the simulator, or writes 403: there is none in production.
func (h *Handler) simulator(w http.ResponseWriter, r *http.Request) (Simulator, bool) {
	if h.svc.Simulator == nil {
		h.writeError(w, r, api.Errorf(api.CodeForbidden, "the traffic simulator runs in the sandbox only"))
		return nil, false
	}
	return h.svc.Simulator, true
}

func (h *Handler) startSimulation(w http.ResponseWriter, r *http.Request) {
	sim, ok := h.simulator(w, r)
	if !ok {
		return
	}
	var in api.SimulationInput
	if err := decodeBody(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	s, err := sim.Start(r.Context(), in)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Single(api.KeySimulation, s))
}

func (h *Handler) getSimulation(w http.ResponseWriter, r *http.Request) {
	h.withSimulation(w, r, Simulator.Get)
}

func (h *Handler) cancelSimulation(w http.ResponseWriter, r *http.Request) {
	h.withSimulation(w, r, Simulator.Cancel)
}

// withSimulation applies op to the simulation the path names and writes the result.
func (h *Handler) withSimulation(w http.ResponseWriter, r *http.Request, op func(Simulator, context.Context, int64) (*api.Simulation, error)) {
	sim, ok := h.simulator(w, r)
	if !ok {
		return
	}
	id, err := pathID(r, "id", "simulation")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	s, err := op(sim, r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Single(api.KeySimulation, s))
}
