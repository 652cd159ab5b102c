package httpapi

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/store"
)

// Paging limits (SPEC §1).
const (
	defaultLimit = 50
	maxLimit     = 500
	maxOffset    = 1 << 30
)

// parsePage reads searchLimit and searchOffset.
func parsePage(r *http.Request) (store.Page, error) {
	p := store.Page{Limit: defaultLimit}
	q := r.URL.Query()
	var fe api.FieldErrors
	if s := q.Get("searchLimit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxLimit {
			fe.Add("searchLimit", api.CodeInvalid, "searchLimit must be an integer from 1 to %d", maxLimit)
		}
		p.Limit = n
	}
	if s := q.Get("searchOffset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > maxOffset {
			fe.Add("searchOffset", api.CodeInvalid, "searchOffset must be a non-negative integer")
		}
		p.Offset = n
	}
	return p, fe.Err("invalid paging parameters")
}

// listParams are the query parameters that lists take.
var listParams = []string{"searchLimit", "searchOffset", "sortOrder", "includeData", "startTime", "endTime"}

// pageActions returns the next and previous links of a page of a list of total records.
func (h *Handler) pageActions(r *http.Request, p store.Page, n, total int) []api.Action {
	link := func(offset int) string {
		// Only the list's own parameters: anything else the caller sent (a token put in
		// the query by mistake, say) is not echoed into links.
		q := url.Values{}
		for _, k := range listParams {
			if v, ok := r.URL.Query()[k]; ok {
				q[k] = v
			}
		}
		q.Set("searchOffset", strconv.Itoa(offset))
		q.Set("searchLimit", strconv.Itoa(p.Limit))
		u := url.URL{RawQuery: q.Encode()}
		return h.cfg.BaseURL + r.URL.Path[len(h.cfg.BasePath):] + u.String()
	}
	var actions []api.Action
	if p.Offset+n < total {
		actions = append(actions, api.Action{Name: api.ActionNext, URI: link(p.Offset + n)})
	}
	if p.Offset > 0 {
		// From past the end, "previous" is the last page that has records.
		actions = append(actions, api.Action{Name: api.ActionPrev, URI: link(max(0, min(p.Offset, total)-p.Limit))})
	}
	return actions
}

// accountID reads the {id} path segment; a malformed id names no account.
func accountID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, api.NotFound("account")
	}
	return id, nil
}

func (h *Handler) listAccounts(w http.ResponseWriter, r *http.Request) {
	p, err := parsePage(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	accounts, total, err := h.svc.Fleet.ListAccounts(r.Context(), p)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.List(api.KeyAccount, accounts, total, h.pageActions(r, p, len(accounts), total)))
}

func (h *Handler) getAccount(w http.ResponseWriter, r *http.Request) {
	id, err := accountID(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	a, err := h.svc.Fleet.GetAccount(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Single(api.KeyAccount, a))
}

func (h *Handler) createAccount(w http.ResponseWriter, r *http.Request) {
	var in api.AccountInput
	if err := decodeBody(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	a, err := h.svc.Fleet.CreateAccount(r.Context(), in)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // the body carries an authorization code
	writeJSON(w, http.StatusOK, api.Single(api.KeyAccount, a))
}

func (h *Handler) updateAccount(w http.ResponseWriter, r *http.Request) {
	id, err := accountID(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var in api.AccountInput
	if err := decodeBody(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	a, err := h.svc.Fleet.UpdateAccount(r.Context(), id, in)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Single(api.KeyAccount, a))
}

func (h *Handler) deleteAccount(w http.ResponseWriter, r *http.Request) {
	id, err := accountID(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := h.svc.Fleet.DeleteAccount(r.Context(), id); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Deleted())
}

func (h *Handler) listVehicles(w http.ResponseWriter, r *http.Request) {
	p, err := parsePage(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	vehicles, total, err := h.svc.Fleet.ListVehicles(r.Context(), p)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.List(api.KeyVehicle, vehicles, total, h.pageActions(r, p, len(vehicles), total)))
}

func (h *Handler) getVehicle(w http.ResponseWriter, r *http.Request) {
	v, err := h.svc.Fleet.GetVehicle(r.Context(), r.PathValue("vehicle"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Single(api.KeyVehicle, v))
}

func (h *Handler) createVehicle(w http.ResponseWriter, r *http.Request) {
	var in api.VehicleInput
	if err := decodeBody(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	v, err := h.svc.Fleet.CreateVehicle(r.Context(), in)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Single(api.KeyVehicle, v))
}

func (h *Handler) updateVehicle(w http.ResponseWriter, r *http.Request) {
	var in api.VehicleInput
	if err := decodeBody(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	v, err := h.svc.Fleet.UpdateVehicle(r.Context(), r.PathValue("vehicle"), in)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Single(api.KeyVehicle, v))
}

func (h *Handler) deleteVehicle(w http.ResponseWriter, r *http.Request) {
	if err := h.svc.Fleet.DeleteVehicle(r.Context(), r.PathValue("vehicle")); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Deleted())
}
