package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
)

// approve approves the plan id posted for an instance, as `modkind approve --plan` does: a plan
// other than the one shown is refused by kind.Approve. A destructive plan needs the instance's
// name typed in confirm: the Source checks it against the plan it reads, not against the form.
func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "cannot read the form", http.StatusBadRequest)
		return
	}
	f := r.PostForm
	name := f.Get("name")
	gen, err := strconv.ParseInt(f.Get("generation"), 10, 64)
	if err != nil {
		http.Error(w, "the form carries no generation", http.StatusBadRequest)
		return
	}
	if err := s.src.Approve(r.Context(), f.Get("kind"), f.Get("namespace"), name, f.Get("plan"), gen, f.Get("confirm")); err != nil {
		http.Error(w, "not approved: "+err.Error(), http.StatusConflict)
		return
	}
	http.Redirect(w, r, "/?"+url.Values{"approved": {f.Get("namespace") + "/" + name}}.Encode(), http.StatusSeeOther)
}
