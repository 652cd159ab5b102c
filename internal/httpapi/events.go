package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/events"
	"github.com/connected-vehicle/vcs/internal/store"
	"github.com/connected-vehicle/vcs/internal/telemetry"
)

func (h *Handler) eventRoutes(mux *http.ServeMux) {
	b := h.cfg.BasePath + "/vehicle/{vehicle}"
	route(mux, b+"/eventSubscription", methods{http.MethodGet: h.authed(h.listSubscriptions)})
	// {a} is a type (WAYPOINT) or a subscription id: types are never numbers.
	route(mux, b+"/eventSubscription/{a}", methods{
		http.MethodGet:    h.authed(h.getOrListSubscriptions),
		http.MethodPost:   h.authed(h.createSubscription),
		http.MethodDelete: h.authed(h.deleteSubscription),
	})
	route(mux, b+"/eventSubscription/{type}/{id}", methods{
		http.MethodGet:    h.authed(h.getSubscription),
		http.MethodDelete: h.authed(h.deleteSubscription),
	})
	route(mux, h.cfg.BasePath+"/test/vehicle/{vehicle}/eventSubscription/{id}", methods{http.MethodGet: h.authed(h.testSubscription)})
	route(mux, b+"/eventNotification", methods{http.MethodGet: h.authed(h.listNotifications)})
	route(mux, b+"/eventNotification/{a}", methods{http.MethodGet: h.authed(h.getOrListNotifications)})
	route(mux, b+"/eventNotification/{type}/{id}", methods{http.MethodGet: h.authed(h.getNotification)})

	route(mux, b+"/dataSet", methods{
		http.MethodGet:  h.authed(h.listDataSets),
		http.MethodPost: h.authed(h.recordDataSet),
	})
	route(mux, b+"/trip", methods{http.MethodGet: h.authed(h.listTrips)})
	route(mux, b+"/trip/{id}", methods{http.MethodGet: h.authed(h.getTrip)})
}

// typeOrID splits the {a} segment: a number is an id, anything else a type.
func typeOrID(a string) (typ string, id int64, err error) {
	if n, err := strconv.ParseInt(a, 10, 64); err == nil {
		if n <= 0 {
			return "", 0, api.NotFound("subscription")
		}
		return "", n, nil
	}
	typ, err = events.ParseType(a)
	return typ, 0, err
}

func pathID(r *http.Request, name, kind string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, api.NotFound(kind)
	}
	return id, nil
}

// parseSort reads sortOrder=asc|desc.
func parseSort(r *http.Request) (bool, error) {
	switch r.URL.Query().Get("sortOrder") {
	case "", "asc", "ASC":
		return false, nil
	case "desc", "DESC":
		return true, nil
	}
	var fe api.FieldErrors
	fe.Add("sortOrder", api.CodeInvalid, "sortOrder must be asc or desc")
	return false, fe.Err("invalid sorting parameter")
}

// listQuery reads paging and sorting.
func listQuery(r *http.Request) (store.Page, bool, error) {
	p, err := parsePage(r)
	if err != nil {
		return p, false, err
	}
	desc, err := parseSort(r)
	return p, desc, err
}

func (h *Handler) createSubscription(w http.ResponseWriter, r *http.Request) {
	if _, err := strconv.ParseInt(r.PathValue("a"), 10, 64); err == nil {
		w.Header().Set("Allow", "DELETE, GET, HEAD")
		h.writeError(w, r, &api.Error{HTTPStatus: http.StatusMethodNotAllowed, Code: api.CodeUnsupported,
			Detail: "subscriptions cannot be updated; delete this one and create another"})
		return
	}
	typ, err := events.ParseType(r.PathValue("a"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var in api.SubscriptionInput
	if err := decodeBody(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	sub, err := h.svc.Events.CreateSubscription(r.Context(), r.PathValue("vehicle"), typ, in)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // the body carries the signing secret
	writeJSON(w, http.StatusOK, api.Single(api.KeySubscription, sub))
}

func (h *Handler) listSubscriptionsOf(w http.ResponseWriter, r *http.Request, typ string) {
	p, desc, err := listQuery(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	subs, total, err := h.svc.Events.ListSubscriptions(r.Context(), r.PathValue("vehicle"), typ, p, desc)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, api.List(api.KeySubscriptions, subs, total, h.pageActions(r, p, len(subs), total)))
}

func (h *Handler) listSubscriptions(w http.ResponseWriter, r *http.Request) {
	h.listSubscriptionsOf(w, r, "")
}

func (h *Handler) getOrListSubscriptions(w http.ResponseWriter, r *http.Request) {
	typ, id, err := typeOrID(r.PathValue("a"))
	switch {
	case err != nil:
		h.writeError(w, r, err)
	case id == 0:
		h.listSubscriptionsOf(w, r, typ)
	default:
		h.writeSubscription(w, r, "", id)
	}
}

func (h *Handler) getSubscription(w http.ResponseWriter, r *http.Request) {
	typ, err := events.ParseType(r.PathValue("type"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	id, err := pathID(r, "id", "subscription")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeSubscription(w, r, typ, id)
}

func (h *Handler) writeSubscription(w http.ResponseWriter, r *http.Request, typ string, id int64) {
	sub, err := h.svc.Events.GetSubscription(r.Context(), r.PathValue("vehicle"), typ, id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, api.Single(api.KeySubscription, sub))
}

func (h *Handler) deleteSubscription(w http.ResponseWriter, r *http.Request) {
	var typ string
	var id int64
	var err error
	if a := r.PathValue("a"); a != "" {
		if typ, id, err = typeOrID(a); err == nil && id == 0 {
			err = api.Errorf(api.CodeInvalid, "give the id of the subscription to delete")
		}
	} else if typ, err = events.ParseType(r.PathValue("type")); err == nil {
		id, err = pathID(r, "id", "subscription")
	}
	if err == nil {
		err = h.svc.Events.DeleteSubscription(r.Context(), r.PathValue("vehicle"), typ, id)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Deleted())
}

func (h *Handler) testSubscription(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		// GET here sends a notification; HEAD, which must be safe, may not.
		w.Header().Set("Allow", http.MethodGet)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	id, err := pathID(r, "id", "subscription")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	n, err := h.svc.Events.TestSubscription(r.Context(), r.PathValue("vehicle"), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Single(api.KeyNotification, n))
}

func (h *Handler) listNotificationsOf(w http.ResponseWriter, r *http.Request, typ string) {
	p, desc, err := listQuery(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	ns, total, err := h.svc.Events.ListNotifications(r.Context(), r.PathValue("vehicle"), typ, p, desc)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.List(api.KeyNotifications, ns, total, h.pageActions(r, p, len(ns), total)))
}

func (h *Handler) listNotifications(w http.ResponseWriter, r *http.Request) {
	h.listNotificationsOf(w, r, "")
}

func (h *Handler) getOrListNotifications(w http.ResponseWriter, r *http.Request) {
	typ, id, err := typeOrID(r.PathValue("a"))
	switch {
	case err != nil:
		h.writeError(w, r, err)
	case id == 0:
		h.listNotificationsOf(w, r, typ)
	default:
		h.writeNotification(w, r, "", id)
	}
}

func (h *Handler) getNotification(w http.ResponseWriter, r *http.Request) {
	typ, err := events.ParseType(r.PathValue("type"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	id, err := pathID(r, "id", "notification")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeNotification(w, r, typ, id)
}

func (h *Handler) writeNotification(w http.ResponseWriter, r *http.Request, typ string, id int64) {
	n, err := h.svc.Events.GetNotification(r.Context(), r.PathValue("vehicle"), typ, id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Single(api.KeyNotification, n))
}

func (h *Handler) recordDataSet(w http.ResponseWriter, r *http.Request) {
	var in api.DataSetInput
	if err := decodeBody(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	d, err := h.svc.Telemetry.Record(r.Context(), r.PathValue("vehicle"), in)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Single(api.KeyDataSet, d))
}

// timeQuery reads paging, sorting, and the startTime/endTime filters of trips and data.
func timeQuery(r *http.Request) (telemetry.TripQuery, error) {
	var tq telemetry.TripQuery
	var err error
	if tq.Page, tq.Descending, err = listQuery(r); err != nil {
		return tq, err
	}
	q := r.URL.Query()
	var fe api.FieldErrors
	parse := func(name string) *time.Time {
		s := q.Get(name)
		if s == "" {
			return nil
		}
		d, err := api.ParseDateTime(s)
		if err != nil {
			fe.Add(name, api.CodeInvalid, "%s must be a date-time like 20261122T023433+0000", name)
			return nil
		}
		return &d.Time
	}
	tq.After, tq.Before = parse("startTime"), parse("endTime")
	switch v := q.Get("includeData"); v {
	case "", "false":
	case "true":
		tq.IncludeData = true
	default:
		fe.Add("includeData", api.CodeInvalid, "includeData must be true or false")
	}
	return tq, fe.Err("invalid query parameters")
}

func (h *Handler) listDataSets(w http.ResponseWriter, r *http.Request) {
	tq, err := timeQuery(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	sets, total, err := h.svc.Telemetry.ListDataSets(r.Context(), r.PathValue("vehicle"), tq)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.List(api.KeyDataSet, sets, total, h.pageActions(r, tq.Page, len(sets), total)))
}

func (h *Handler) listTrips(w http.ResponseWriter, r *http.Request) {
	tq, err := timeQuery(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	trips, total, err := h.svc.Telemetry.ListTrips(r.Context(), r.PathValue("vehicle"), tq)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.List(api.KeyTrip, trips, total, h.pageActions(r, tq.Page, len(trips), total)))
}

func (h *Handler) getTrip(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id", "trip")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	t, err := h.svc.Telemetry.GetTrip(r.Context(), r.PathValue("vehicle"), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Single(api.KeyTrip, t))
}
