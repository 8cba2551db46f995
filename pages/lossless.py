"""Is it lossless? Speculative samples, drawn through specviz's own verifier, converge to p — not to q."""
import inspect
from dataclasses import replace

import streamlit as st

from specviz.core import verify as verify_mod
from specviz.core.errors import InputError, ModelError
from specviz.core.sampling import SamplingConfig
from specviz.core.siblings import MODES as SIBLING_MODES
from specviz.engine.methods import encode_prompt, make_proposer
from specviz.engine.workloads import WORKLOADS, get
from specviz.teach import lab as L
from specviz.teach.guess import Guess
from specviz.ui import guess as G, labs_lossless, links as LK, loading
from specviz.viz import lab as V, step as vz

st.title("Is it lossless?")
st.write("The acceptance rule keeps a drafted token x with probability min(1, p(x)/q(x)); on a rejection it "
         "draws the correction from the residual norm(max(0, p − q)). The claim: the emitted token then "
         "follows the target's p exactly, whatever the draft's q. Here you test it by drawing many times.")

TRIALS, REAL_TRIALS = [100, 300, 1000, 3000, 10000, 30000], [200, 500, 1000, 2000, 5000]
LINK = [LK.Param("lab_preset", "choice", options=tuple(L.PRESETS)), LK.Param("lab_p", "text"),
        LK.Param("lab_q", "text"), LK.Param("lab_trials", "choice", options=tuple(TRIALS)),
        LK.Param("lab_rule", "choice", options=tuple(L.RULES)),
        LK.Param("lab_real_method", "choice", options=tuple(loading.methods_offered())),
        LK.Param("lab_real_workload", "choice", options=tuple(w.name for w in WORKLOADS)),
        LK.Param("lab_real_temp", "float", 0.1, 2.0), LK.Param("lab_real_trials", "choice", options=tuple(REAL_TRIALS)),
        # the labs in ui/labs_lossless.py: the lossy rules' thresholds, tree sampling by hand, sampled siblings
        LK.Param("ly_eps", "float", 0.0, 1.0), LK.Param("ly_delta", "float", 0.0, 1.0),
        LK.Param("ly_single", "float", 0.0, 1.0), LK.Param("ly_acc", "float", 0.01, 1.0), LK.Param("tsb_p", "text"),
        LK.Param("tsb_cands", "text"), LK.Param("tsb_rule", "choice", options=tuple(L.SIBLING_RULES)),
        LK.Param("ssb_p", "text"), LK.Param("ssb_q", "text"),
        LK.Param("ssb_trials", "choice", options=(500, 2000, 6000, 20000)),
        LK.Param("ssb_mode", "choice", options=tuple(SIBLING_MODES))]
linked = LK.check("lossless", LINK)  # a shared link: one warning naming any parameter the widgets below will not take
link_box = st.container()            # "Link to this experiment", filled at the end with every setting drawn

# -- part 1: a toy vocabulary ------------------------------------------------------------------
st.header("1 · A toy vocabulary")


def _load_preset():
    st.session_state["lab_p"], st.session_state["lab_q"] = L.PRESETS[st.session_state["lab_preset"]]


st.session_state.setdefault("lab_preset", linked.get("lab_preset", next(iter(L.PRESETS))))
if "lab_p" not in st.session_state:
    _load_preset()  # a link's p and q (bound below) take the place of the preset's
st.selectbox("Start from", list(L.PRESETS), key="lab_preset", on_change=_load_preset, bind=LK.BIND)
c1, c2 = st.columns(2)
c1.text_input("p — the target (numbers, normalised for you)", key="lab_p", bind=LK.BIND)
c2.text_input("q — the draft", key="lab_q", bind=LK.BIND)
trials = st.select_slider("Trials", TRIALS, value=1000 if loading.TINY else 10000, key="lab_trials", bind=LK.BIND)

try:
    p, q = L.pair(st.session_state["lab_p"], st.session_state["lab_q"])
    st.session_state["lab_pq"] = (p, q)
except InputError as e:
    st.error(str(e))
    p, q = st.session_state.get("lab_pq", L.pair(*L.PRESETS[next(iter(L.PRESETS))]))
    st.caption("Showing the last valid p and q.")
labels = [chr(ord("A") + i) for i in range(len(p))]
s = L.stats(p, q)
rule = st.radio("Acceptance rule", list(L.RULES), horizontal=True, key="lab_rule", bind=LK.BIND,
                help="Break the rule on purpose and watch the output drift away from p.")
st.caption(L.RULES[rule])
with st.expander("Show the code: the rule as the engine runs it (core/verify.py, read from the module now)"):
    st.code(inspect.getsource(verify_mod.residual) + "\n" + inspect.getsource(verify_mod.verify), language="python")
GUESS = Guess(f"{L.KEPT_WORDS[rule]} (0 to 1)", "kept", lo=0.0, hi=1.0, step=0.05, rel=0.0, abs_tol=0.05)
guess = G.ask("lab_kept", GUESS)
if rule != "exact":  # say the drift before any draw, so a small one on a mild preset is not missed
    d, far = L.drift(p, q, rule), L.drift(*L.pair(*L.PRESETS[L.CLEAR_PRESET]), rule)
    small = d < 0.2 and far > d and st.session_state["lab_preset"] != L.CLEAR_PRESET
    st.warning(f"With this rule the output will sit **{d:.2f}** from p in total variation, however many draws "
               "you make" + (f": small on this p and q. On “{L.CLEAR_PRESET}” the same rule drifts **{far:.2f}**."
                             if small else "."), icon=":material/warning:")
    if small:
        st.button(f"Use “{L.CLEAR_PRESET}”", key="lab_use_far",
                  on_click=lambda: (st.session_state.update(lab_preset=L.CLEAR_PRESET), _load_preset()))
if st.button("Draw speculative samples", type="primary", key="lab_run") and G.lock("lab_kept", guess):
    with G.measuring(errors=(), bar="drawing…") as step:
        st.session_state["lab_sim"] = (p, q, L.simulate(p, q, int(trials), seed=0, progress=step, rule=rule), rule)
    st.session_state.pop("lab_at", None)  # a new run: show its last checkpoint
if "lab_sim" in st.session_state:
    sp, sq, sim, srule = st.session_state["lab_sim"]
    ss_ = L.stats(sp, sq)
    G.show("lab_kept", replace(GUESS, prompt=f"{L.KEPT_WORDS[srule]} (0 to 1)"), {"kept": L.kept_share(sp, sq, srule)})
    m1, m2, m3 = st.columns(3)
    m1.metric("Σ min(p, q) = P(draft kept)", f"{ss_.acceptance:.3f}")
    m2.metric("P(reject) = 1 − Σ min(p, q)", f"{1 - ss_.acceptance:.3f}")
    m3.metric("total variation distance p ↔ q", f"{ss_.tv:.3f}")
    st.caption("The last two are equal for every p and q: Σ min(p, q) = 1 − ½ Σ |p − q|, so the rule rejects "
               "exactly as often as p and q differ. The Derivations page proves it.")
    st.plotly_chart(V.toy(sp, sq, ss_.residual, labels), key="lab_toy")
    st.caption("Grey is what both agree on — kept when drafted. Purple is where the corrections come from: "
               "exactly the mass p has and q lacks.")
    lab_s = [chr(ord("A") + i) for i in range(len(sp))]
    at = st.select_slider("Show the output after", sim.checkpoints, value=sim.checkpoints[-1], key="lab_at",
                          format_func=lambda n: f"{n} trials")
    j = sim.checkpoints.index(at)
    st.plotly_chart(V.histogram(sim.snapshots[j], sp, sq, lab_s, at), key="lab_hist")
    st.plotly_chart(V.convergence(sim), key="lab_conv")
    st.markdown(f"Rule: **{srule}**. After **{sim.trials}** trials the output is **{sim.tv_to_p[-1]:.3f}** from p "
                f"and **{sim.tv_to_q[-1]:.3f}** from q (total variation). Drafts kept: "
                f"**{sim.accepted / sim.trials:.3f}** counted in the trials vs Σ min(p, q) = **{ss_.acceptance:.3f}** "
                "computed from p and q.")
    if srule == "exact":
        st.markdown("The distance to p shrinks like 1/√trials; the distance to q does not.")
    else:
        drift = L.output_distribution(sp, sq, srule)
        st.warning(f"With this rule the output follows {', '.join(f'{x:.3f}' for x in drift.tolist())} instead "
                   f"of p — {0.5 * float((drift - sp).abs().sum()):.3f} away from p in total variation, and more "
                   "trials will not close that gap. Only the residual norm(max(0, p − q)) puts back exactly the "
                   "mass the test took away.")
else:
    st.info("Commit to a guess, then press **Draw speculative samples** to run the verifier many times.")

labs_lossless.lossy_section(p, q)  # Medusa's typical acceptance and SGLang's thresholds, labelled lossy

labs_lossless.tree_sampling_section()  # siblings tested in turn against the residual, and a broken version
labs_lossless.sampled_siblings_section()  # siblings drawn from q: i.i.d., without replacement renormalised, unadjusted

# -- part 2: the real model ---------------------------------------------------------------------
st.header("2 · The real model's next token")
st.write("The same test on the target's actual next-token distribution p (all of its vocabulary) with a "
         "real proposer's q at the same position.")
target, methods, why_not, drafter = loading.target_and_methods()
if "draft" not in methods and not {"medusa", "eagle"} & set(methods):
    st.info("No model proposer (draft model or trained heads) is available for this target, so only "
            "lookup's one-hot q can be tested here.")
c1, c2, c3 = st.columns(3)
proposer_name = c1.selectbox("Proposer", methods, key="lab_real_method", bind=LK.BIND)
wname = c2.selectbox("Prompt", [w.name for w in WORKLOADS], key="lab_real_workload", bind=LK.BIND,
                     help="Lookup needs a copy-heavy prompt so that its search finds a match.")
temp = c3.number_input("temperature", 0.1, 2.0, 1.0, 0.1, key="lab_real_temp", bind=LK.BIND)
real_trials = st.select_slider("Trials", REAL_TRIALS, value=200 if loading.TINY else 2000, key="lab_real_trials",
                               bind=LK.BIND)
with link_box:
    LK.share("lossless", LK.current(LINK), "press Draw there: the toy draws are seeded, so they come out the same")

if st.button("Run on the real model", key="lab_real_run", disabled=proposer_name is None):
    try:
        w = get(wname)
        ids = encode_prompt(target.tokenizer, w.prompt, w.chat)
        prop = make_proposer(proposer_name, target, n=2, drafter=drafter)
        if prop.deterministic:  # lookup: move into the reply until the search finds a match
            ids = L.first_drafting_prefix(target, prop, ids)
        case = L.real_case(target, prop, ids, SamplingConfig(temperature=float(temp)))
        if case is None:
            st.warning(f"{proposer_name} drafted nothing at this position (no match in the context): pick "
                       "a copy-heavy prompt.")
        else:
            red = L.reduce(case)
            with G.measuring(errors=(), bar="drawing…") as step:
                sim, shown = L.simulate_real(red, int(real_trials), progress=step)
            st.session_state["lab_real"] = (proposer_name, wname, case, red, sim, shown,
                                            len(ids) - len(encode_prompt(target.tokenizer, w.prompt, w.chat)))
    except (InputError, ModelError) as e:
        st.error(str(e))

if "lab_real" in st.session_state:
    name, wname_r, case, red, sim, shown, ahead = st.session_state["lab_real"]
    toks = ([vz.token_label(target.tokenizer, red.ids[j]) for j in shown]
            + [f"(the other {len(case.p) - len(shown)} ids)"])
    st.plotly_chart(V.histogram(L.project(sim.freq, shown), L.project(red.p, shown), L.project(red.q, shown),
                                toks, sim.trials), key="lab_real_hist")
    acc = float(L.stats(case.p, case.q).acceptance)
    where = (f"{ahead} token{'s' if ahead > 1 else ''} into the target's greedy reply" if ahead
             else "the first reply token")
    st.markdown(f"**{name}** on *{wname_r}*, at {where}: Σ min(p, q) = **{acc:.3f}** over all "
                f"{len(case.p)} token ids ({red.acceptance:.3f} over the vocabulary the draws use); "
                f"drafts kept in the trials: **{sim.accepted / sim.trials:.3f}**. After {sim.trials} trials "
                f"the output is **{sim.tv_to_p[-1]:.3f}** from p and **{sim.tv_to_q[-1]:.3f}** from q "
                "(total variation over the bars shown).")
    capped = max(red.tail_p, red.tail_q) > 1 - L.COVERAGE + 1e-9
    st.caption(f"The last bar holds every id not drawn as a bar of its own. For speed the draws use "
               f"{len(red.ids)} ids: for each of p and q its top ids until they hold {L.COVERAGE:.1%} of its mass, "
               f"or its top {L.MAX_IDS}, whichever is fewer; one stand-in takes the rest ({red.tail_p:.2%} of p, "
               f"{red.tail_q:.2%} of q)" + (f": here the {L.MAX_IDS}-id cap was reached first" if capped else "")
               + ". The last bar includes that stand-in.")
    st.markdown(f"P(reject) = 1 − Σ min(p, q) = **{1 - acc:.3f}**, and the total variation distance between p and q "
                f"at this position is **{0.5 * float((case.p - case.q).abs().sum()):.3f}**: the same number.")
    if case.one_hot:
        x = case.drafted
        st.markdown(f"Lookup's q is one-hot on its drafted token {target.tokenizer.decode([x])!r}, so "
                    f"Σ min(p, q) = min(p(x), 1) = p(x) = **{float(case.p[x]):.3f}**: the rule reduces to "
                    "*accept x with probability p(x)*; otherwise sample from p with x removed and "
                    "renormalised.")
    labs_lossless.lossy_on_real(st.session_state["lab_real"])  # the lossy rules on this real p and q
