// The billing view: plan limits, usage in the period, what remains, and the status.
import { $, api, definitions, el } from "./api.js";

export async function loadBilling() {
  $("billing-error").textContent = "";
  try {
    const state = await api("/api/product/billing/state");
    $("plan-name").textContent = state.plan.name;
    $("billing-status").textContent = state.status;
    $("billing-status").className = `state ${state.status}`;
    $("billing-period").textContent =
      `Period ${state.usage.period_start} to ${state.usage.period_end}`;
    const rows = Object.entries(state.plan.limits).map(([name, limit]) => {
      const row = el("tr");
      row.append(el("td", name), el("td", limit), el("td", state.remaining[name] ?? "—"));
      return row;
    });
    $("billing-rows").replaceChildren(...rows);
    const usage = Object.entries(state.usage).filter(([k]) => !k.startsWith("period_"));
    definitions($("billing-usage"), usage);
  } catch (error) {
    $("billing-error").textContent = error.message;
  }
}
