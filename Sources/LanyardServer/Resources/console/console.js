// Lanyard Console: a small single-page app over /v1/admin/*. No dependencies, no inline script or style (the
// page's Content-Security-Policy allows neither). The admin key lives in sessionStorage: this tab only.
"use strict";

const KEY = "lanyard.admin.key";
const $ = (selector) => document.querySelector(selector);

/** Builds an element: h("td", {class: "x"}, "text", child). Text is always text, never HTML. */
function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

function svg(tag, attributes, ...children) {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attributes || {})) element.setAttribute(name, value);
  for (const child of children.flat()) element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return element;
}

class APIError extends Error {
  constructor(status, body) {
    super(body?.error?.message || `The server answered ${status}`);
    this.status = status;
    this.code = body?.error?.code;
    this.details = body?.error?.details || {};
  }
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { "Authorization": `Bearer ${sessionStorage.getItem(KEY) || ""}`,
               ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : null;
  if (!response.ok) {
    if (response.status === 403 && json?.error?.code === "FORBIDDEN") signOut("The admin key was refused.");
    throw new APIError(response.status, json);
  }
  return json;
}

// MARK: Formatting

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
function when(text) { return text ? dateTime.format(new Date(text)) : "—"; }

function ago(text) {
  if (!text) return "—";
  const seconds = (Date.now() - new Date(text).getTime()) / 1000;
  if (seconds < 60) return "just now";
  for (const [unit, size] of [["day", 86400], ["hour", 3600], ["minute", 60]]) {
    if (seconds >= size) { const n = Math.floor(seconds / size); return `${n} ${unit}${n === 1 ? "" : "s"} ago`; }
  }
  return "just now";
}

const ICONS = {
  apple: "M16.4 12.6c0-2.4 2-3.6 2.1-3.7-1.1-1.7-2.9-1.9-3.5-1.9-1.5-.2-2.9.9-3.7.9-.8 0-1.9-.9-3.2-.8-1.6 0-3.2 1-4 2.4-1.7 3-.4 7.4 1.2 9.8.8 1.2 1.8 2.5 3 2.4 1.2 0 1.7-.8 3.1-.8s1.9.8 3.2.8c1.3 0 2.1-1.2 2.9-2.4.9-1.4 1.3-2.7 1.3-2.8 0 0-2.4-1-2.4-3.9zM14 5.3c.7-.8 1.1-1.9 1-3-1 0-2.1.7-2.8 1.5-.6.7-1.2 1.8-1 2.9 1.1.1 2.1-.6 2.8-1.4z",
  google: "M21.6 12.2c0-.7-.1-1.4-.2-2H12v3.8h5.4a4.6 4.6 0 0 1-2 3v2.5h3.2c1.9-1.7 3-4.3 3-7.3zM12 22c2.7 0 5-.9 6.6-2.5l-3.2-2.5c-.9.6-2 1-3.4 1-2.6 0-4.8-1.8-5.6-4.1H3.1v2.6A10 10 0 0 0 12 22zM6.4 13.9a6 6 0 0 1 0-3.8V7.5H3.1a10 10 0 0 0 0 9zM12 6c1.5 0 2.8.5 3.8 1.5l2.8-2.8A9.6 9.6 0 0 0 12 2 10 10 0 0 0 3.1 7.5l3.3 2.6C7.2 7.8 9.4 6 12 6z",
};

function provider(name) {
  const path = ICONS[name];
  const icon = path ? svg("svg", { viewBox: "0 0 24 24", "aria-hidden": "true" },
    svg("path", { d: path, fill: name === "google" ? "#1a73e8" : "#111" })) : null;
  return h("span", { class: "provider", "data-provider": name }, icon, name.charAt(0).toUpperCase() + name.slice(1));
}

function statusBadge(user) {
  if (user.disabled) return h("span", { class: "badge disabled", id: "status" }, "Disabled");
  if (user.is_anonymous) return h("span", { class: "badge guest", id: "status" }, "Guest");
  return h("span", { class: "badge active", id: "status" }, "Active");
}

function empty(title, text) {
  return h("div", { class: "empty" }, h("strong", {}, title), text);
}

function errorBox(error) {
  return h("p", { class: "error", role: "alert" }, error.message || String(error));
}

function confirmDialog(title, text, action) {
  const dialog = $("#confirm");
  $("#confirm-title").textContent = title;
  $("#confirm-text").textContent = text;
  $("#confirm-ok").textContent = action;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "";
    dialog.showModal();
  });
}

// MARK: Views

/** Bumped by each navigation: a view's answer that comes back after the operator has gone elsewhere is dropped. */
let generation = 0;

/** `show`, unless the operator has navigated since the view began (`ticket`): a slow answer never replaces the page. */
function showFor(ticket, ...children) {
  if (ticket === generation) show(...children);
}

function show(...children) {
  const view = $("#view");
  // A part a view leaves out is null: replaceChildren would print it as the text "null".
  view.replaceChildren(...children.flat().filter((child) => child !== undefined && child !== null && child !== false));
  view.hidden = false;
}

const usersState = { query: "", filter: "", disabled: false, provider: "", batch: "", cursors: [null] };

async function usersView() {
  const search = h("input", { type: "search", id: "search", placeholder: "Search by email, name, account id or provider subject",
    value: usersState.query, "aria-label": "Search accounts" });
  const kind = h("select", { id: "kind", "aria-label": "Kind of account" },
    h("option", { value: "" }, "All accounts"), h("option", { value: "false" }, "Signed in"), h("option", { value: "true" }, "Guests"));
  kind.value = usersState.filter;
  const providerSelect = h("select", { id: "provider", "aria-label": "Provider" },
    h("option", { value: "" }, "Any provider"), h("option", { value: "apple" }, "Apple"), h("option", { value: "google" }, "Google"));
  providerSelect.value = usersState.provider;
  const disabled = h("input", { type: "checkbox", id: "only-disabled" });
  disabled.checked = usersState.disabled;
  const results = h("div", { id: "results" }, h("p", { class: "loading" }, "Loading…"));
  const restart = () => {
    Object.assign(usersState, { query: search.value.trim(), filter: kind.value, provider: providerSelect.value,
      disabled: disabled.checked, cursors: [null] });
    loadUsers(results);
  };
  let timer;
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(restart, 250); });
  search.addEventListener("keydown", (event) => { if (event.key === "Enter") { clearTimeout(timer); restart(); } });
  for (const control of [kind, providerSelect, disabled]) control.addEventListener("change", restart);
  // Reached from an import batch's page: only that batch's accounts, until the operator clears it.
  const batchFilter = usersState.batch ? h("p", { class: "notice", id: "batch-filter" },
    "Accounts import ", h("a", { href: `#/imports/${encodeURIComponent(usersState.batch)}`, class: "mono" }, usersState.batch),
    " created, still here. ",
    h("button", { type: "button", id: "clear-batch", onclick: () => { Object.assign(usersState, { batch: "", cursors: [null] }); usersView(); } }, "Show all accounts"))
    : null;
  show(h("div", { class: "head" }, h("div", {}, h("h1", {}, "Users"), h("p", { class: "muted" }, "Every account, newest first."))),
    batchFilter,
    h("div", { class: "card" },
      h("div", { class: "toolbar" }, search, kind, providerSelect, h("label", {}, disabled, "Disabled only")),
      results));
  search.focus();
  await loadUsers(results);
}

async function loadUsers(results) {
  const cursor = usersState.cursors[usersState.cursors.length - 1];
  const params = new URLSearchParams({ limit: "25" });
  if (usersState.query) params.set("query", usersState.query);
  if (usersState.filter) params.set("anonymous", usersState.filter);
  if (usersState.provider) params.set("provider", usersState.provider);
  if (usersState.disabled) params.set("disabled", "true");
  if (usersState.batch) params.set("import_batch", usersState.batch);
  if (cursor) params.set("cursor", cursor);
  try {
    const page = await api("GET", `/v1/admin/users?${params}`);
    if (page.users.length === 0) {
      results.replaceChildren(empty(usersState.query ? "No accounts match" : "No accounts yet",
        usersState.query ? "Try an email, part of a name, an account id or a provider's subject." : "Accounts appear here once people sign in."));
      return;
    }
    const rows = page.users.map((user) => h("tr", { class: "link", "data-user-id": user.id, tabindex: "0",
        onclick: () => { location.hash = `#/users/${user.id}`; },
        onkeydown: (event) => { if (event.key === "Enter") location.hash = `#/users/${user.id}`; } },
      h("td", {}, h("div", {}, user.display_name || user.email || (user.is_anonymous ? "Guest" : "(no name)")),
        h("div", { class: "muted mono" }, user.id),
        user.legacy_id ? h("div", { class: "muted legacy" }, `${sourceName(user.legacy_source)}: `, h("span", { class: "mono" }, user.legacy_id)) : null),
      h("td", {}, user.email || h("span", { class: "muted" }, "—")),
      h("td", {}, user.providers.length ? user.providers.map(provider) : h("span", { class: "muted" }, "none")),
      h("td", {}, statusBadge(user)),
      h("td", { title: when(user.created_at) }, ago(user.created_at)),
      h("td", { title: when(user.last_active_at) }, ago(user.last_active_at))));
    const previous = h("button", { type: "button", id: "previous", disabled: usersState.cursors.length === 1,
      onclick: () => { usersState.cursors.pop(); loadUsers(results); } }, "← Newer");
    const next = h("button", { type: "button", id: "next", disabled: !page.next_cursor,
      onclick: () => { usersState.cursors.push(page.next_cursor); loadUsers(results); } }, "Older →");
    results.replaceChildren(
      h("table", {}, h("thead", {}, h("tr", {}, ["Account", "Email", "Sign-in methods", "Status", "Created", "Last active"].map((t) => h("th", {}, t)))),
        h("tbody", {}, rows)),
      h("div", { class: "pager" }, previous, h("span", { class: "muted" }, `Page ${usersState.cursors.length}`), next));
  } catch (error) {
    results.replaceChildren(errorBox(error));
  }
}

async function userView(id) {
  const ticket = generation;
  show(h("a", { href: "#/users", class: "back" }, "← Users"), h("p", { class: "loading" }, "Loading…"));
  let details;
  try {
    details = await api("GET", `/v1/admin/users/${encodeURIComponent(id)}`);
  } catch (error) {
    showFor(ticket, h("a", { href: "#/users", class: "back" }, "← Users"),
      error.status === 404 ? empty("No such account", "It may have been deleted.") : errorBox(error));
    return;
  }
  const { user, identities, sessions, audit } = details;
  let merges = [];
  try {
    merges = (await api("GET", `/v1/admin/merges?user_id=${encodeURIComponent(id)}`)).merges;
  } catch (error) {
    merges = [];
  }
  const hasPasskeys = identities.some((identity) => identity.provider === "passkey");
  let passkeys = [];
  if (hasPasskeys) {
    try {
      passkeys = (await api("GET", `/v1/admin/users/${encodeURIComponent(id)}/passkeys`)).passkeys;
    } catch (error) {
      passkeys = [];
    }
  }
  const actionError = h("div", { id: "action-error" });
  const run = async (title, text, action, request) => {
    if (!(await confirmDialog(title, text, action))) return;
    try {
      await request();
      actionError.replaceChildren();
      return true;
    } catch (error) {
      actionError.replaceChildren(errorBox(error));
      return false;
    }
  };
  const disable = h("button", { type: "button", id: user.disabled ? "enable" : "disable", class: user.disabled ? "" : "danger",
    onclick: async () => {
      const disabling = !user.disabled;
      if (await run(disabling ? "Disable this account?" : "Enable this account?",
        disabling ? "Its sessions end now, and it cannot sign in, refresh or use a token until enabled again." :
          "The person can sign in again; ended sessions stay ended.",
        disabling ? "Disable" : "Enable",
        () => api("PATCH", `/v1/admin/users/${encodeURIComponent(id)}`, { disabled: disabling }))) userView(id);
    } }, user.disabled ? "Enable" : "Disable");
  const signOutAll = h("button", { type: "button", id: "signout-all", disabled: sessions.length === 0,
    onclick: async () => {
      if (await run("Sign out everywhere?", `Ends ${sessions.length} active session${sessions.length === 1 ? "" : "s"}.`, "Sign out",
        () => api("POST", `/v1/admin/users/${encodeURIComponent(id)}/signout`))) userView(id);
    } }, "Sign out everywhere");
  const hasEmail = identities.some((identity) => identity.provider === "email");
  const recovery = hasEmail ? h("button", { type: "button", id: "send-recovery",
    onclick: async () => {
      if (await run("Send a recovery code?", "A code goes to the account's email address; the person signs in with it in the app. This is audited, and your app's backend hears user.recovery_sent.",
        "Send", () => api("POST", `/v1/admin/users/${encodeURIComponent(id)}/recovery`))) userView(id);
    } }, "Send recovery code") : null;
  const remove = h("button", { type: "button", id: "delete", class: "danger",
    onclick: async () => {
      if (await run("Delete this account?", "The account, its sign-in methods, sessions and data are deleted. This cannot be undone.",
        "Delete", () => api("DELETE", `/v1/admin/users/${encodeURIComponent(id)}`))) location.hash = "#/users";
    } }, "Delete");

  const identityRows = identities.map((identity) => h("tr", { "data-identity-id": identity.id },
    h("td", {}, provider(identity.provider), identity.primary ? h("span", { class: "badge", "data-primary": "true" }, "Primary") : null),
    h("td", { class: "mono" }, identity.subject),
    h("td", {}, identity.email || h("span", { class: "muted" }, "—"), identity.is_private_email ? h("span", { class: "muted" }, " (relay)") : null),
    h("td", {}, when(identity.linked_at)), h("td", {}, ago(identity.last_sign_in_at))));
  const sessionRows = sessions.map((session) => h("tr", { "data-session-id": session.id },
    h("td", {}, session.method), h("td", { class: "mono" }, session.client_ip || "—"),
    h("td", { class: "muted" }, session.user_agent || "—"),
    h("td", {}, when(session.created_at)), h("td", {}, ago(session.last_refreshed_at)),
    h("td", {}, h("button", { type: "button", class: "small revoke", onclick: async () => {
      if (await run("Revoke this session?", "That device is signed out at once.", "Revoke",
        () => api("DELETE", `/v1/admin/users/${encodeURIComponent(id)}/sessions/${encodeURIComponent(session.id)}`))) userView(id);
    } }, "Revoke"))));
  const passkeyRows = passkeys.map((passkey) => h("tr", { "data-passkey-id": passkey.id },
    h("td", {}, passkey.name), h("td", {}, when(passkey.created_at)), h("td", {}, ago(passkey.last_used_at)),
    h("td", {}, passkey.backed_up ? "Synced" : h("span", { class: "muted" }, "This device only")),
    h("td", {}, h("button", { type: "button", class: "small remove-passkey", disabled: identities.length === 1, onclick: async () => {
      if (await run("Remove this passkey?", "It no longer signs in (a lost or stolen device). This is audited, and your app's backend hears identity.unlinked.",
        "Remove", () => api("DELETE", `/v1/admin/users/${encodeURIComponent(id)}/passkeys/${encodeURIComponent(passkey.id)}`))) userView(id);
    } }, "Remove"))));
  const mergeRows = merges.map((merge) => {
    const absorbed = merge.from === user.id;
    const other = absorbed ? merge.into : merge.from;
    const revertible = !merge.reverted_at && Date.now() - new Date(merge.created_at).getTime() < 30 * 86400000;
    return h("tr", { "data-merge-id": merge.merge_id },
      h("td", {}, absorbed ? "Merged into " : "Absorbed ", h("a", { href: `#/users/${other}`, class: "mono" }, other)),
      h("td", {}, `${merge.report.records_moved} records, ${merge.report.identities_moved.join(", ") || "no sign-in methods"}`),
      h("td", {}, merge.actor === "admin" ? "an operator" : "the person"),
      h("td", { title: when(merge.created_at) }, ago(merge.created_at)),
      h("td", {}, merge.reverted_at ? h("span", { class: "muted" }, `Reverted ${ago(merge.reverted_at)}`)
        : revertible ? h("button", { type: "button", class: "small revert-merge", onclick: async () => {
          if (await run("Revert this merge?", "The merged account comes back with the sign-in methods and records the merge moved, except records changed since. Group memberships stay.",
            "Revert", () => api("POST", `/v1/admin/merges/${encodeURIComponent(merge.merge_id)}/revert`))) userView(id);
        } }, "Revert") : h("span", { class: "muted" }, "Past 30 days")));
  });
  const events = audit.map((event) => h("li", {}, h("span", { class: "muted" }, when(event.at)),
    h("span", {}, h("strong", {}, event.type), event.details ? h("span", { class: "muted" }, " " + Object.entries(event.details)
      .filter(([key]) => key !== "discarded_data").map(([key, value]) => `${key}: ${value}`).join(", ")) : null,
      event.client_ip ? h("span", { class: "muted" }, ` · ${event.client_ip}`) : null)));

  showFor(ticket, h("a", { href: "#/users", class: "back" }, "← Users"),
    h("div", { class: "head" },
      h("div", {}, h("h1", { id: "user-title" }, user.display_name || user.email || (user.is_anonymous ? "Guest" : "(no name)"), " ", statusBadge(user)),
        h("p", { class: "muted" }, h("span", { class: "mono" }, user.id), ` · created ${when(user.created_at)} · active ${ago(user.last_active_at)}`),
        user.legacy_id ? h("p", { class: "muted", id: "legacy", "data-legacy-source": user.legacy_source }, "Known to ",
          h("strong", { class: "legacy-source" }, sourceName(user.legacy_source)),
          " as ", h("span", { class: "mono legacy-id" }, user.legacy_id)) : null),
      h("div", { class: "actions" }, recovery, disable, signOutAll, remove)),
    actionError,
    identities.length === 1 ? h("p", { class: "notice", id: "single-method" },
      "One sign-in method: if the person loses it, they cannot get back in. The app nudges them to add a second (GET /v1/users/me → recovery.methods).") : null,
    h("div", { class: "card" }, h("h2", {}, "Sign-in methods"),
      identityRows.length ? h("table", {}, h("thead", {}, h("tr", {}, ["Provider", "Subject", "Email", "Linked", "Last sign-in"].map((t) => h("th", {}, t)))),
        h("tbody", {}, identityRows)) : empty("No sign-in methods", "A guest: the account has no identity yet.")),
    passkeyRows.length ? h("div", { class: "card" }, h("h2", {}, "Passkeys"),
      h("table", { id: "passkeys" }, h("thead", {}, h("tr", {}, ["Name", "Created", "Last used", "Backed up", ""].map((t) => h("th", {}, t)))),
        h("tbody", {}, passkeyRows))) : null,
    h("div", { class: "card" }, h("h2", {}, "Active sessions"),
      sessionRows.length ? h("table", { id: "sessions" }, h("thead", {}, h("tr", {}, ["Method", "IP", "Device", "Signed in", "Last refreshed", ""].map((t) => h("th", {}, t)))),
        h("tbody", {}, sessionRows)) : empty("No active sessions", "The person is signed out everywhere.")),
    mergeRows.length ? h("div", { class: "card" }, h("h2", {}, "Merges"),
      h("table", { id: "merges" }, h("thead", {}, h("tr", {}, ["Merge", "Moved", "By", "When", ""].map((t) => h("th", {}, t)))),
        h("tbody", {}, mergeRows))) : null,
    h("div", { class: "card" }, h("h2", {}, "Audit"),
      events.length ? h("ul", { class: "timeline" }, events) : empty("No events", "Nothing recorded for this account.")));
}

// MARK: Groups

const groupsState = { query: "" };

async function groupsView() {
  const search = h("input", { type: "search", id: "group-search", placeholder: "Search by group name or id",
    value: groupsState.query, "aria-label": "Search groups" });
  const results = h("div", { id: "group-results" }, h("p", { class: "loading" }, "Loading…"));
  let timer;
  const restart = () => { groupsState.query = search.value.trim(); loadGroups(results); };
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(restart, 250); });
  search.addEventListener("keydown", (event) => { if (event.key === "Enter") { clearTimeout(timer); restart(); } });
  show(h("div", { class: "head" }, h("div", {}, h("h1", {}, "Groups"),
      h("p", { class: "muted" }, "Families and teams, newest first."))),
    h("div", { class: "card" }, h("div", { class: "toolbar" }, search), results));
  search.focus();
  await loadGroups(results);
}

async function loadGroups(results) {
  const params = new URLSearchParams({ limit: "50" });
  if (groupsState.query) params.set("query", groupsState.query);
  try {
    const { groups } = await api("GET", `/v1/admin/groups?${params}`);
    if (groups.length === 0) {
      results.replaceChildren(empty(groupsState.query ? "No groups match" : "No groups yet",
        groupsState.query ? "Try part of a name, or a group's id." : "Groups appear here once people create them."));
      return;
    }
    const open = (group) => { location.hash = `#/groups/${group.id}`; };
    results.replaceChildren(h("table", {},
      h("thead", {}, h("tr", {}, ["Group", "Kind", "Members", "Created"].map((t) => h("th", {}, t)))),
      h("tbody", {}, groups.map((group) => h("tr", { class: "link", "data-group-id": group.id, tabindex: "0",
          onclick: () => open(group), onkeydown: (event) => { if (event.key === "Enter") open(group); } },
        h("td", {}, h("div", {}, group.name), h("div", { class: "muted mono" }, group.id)),
        h("td", {}, group.kind), h("td", {}, String(group.member_count)),
        h("td", { title: when(group.created_at) }, ago(group.created_at)))))));
  } catch (error) {
    results.replaceChildren(errorBox(error));
  }
}

async function groupView(id) {
  const ticket = generation;
  const back = () => h("a", { href: "#/groups", class: "back" }, "← Groups");
  show(back(), h("p", { class: "loading" }, "Loading…"));
  let details;
  try {
    details = await api("GET", `/v1/admin/groups/${encodeURIComponent(id)}`);
  } catch (error) {
    showFor(ticket, back(), error.status === 404 ? empty("No such group", "It may have been dissolved.") : errorBox(error));
    return;
  }
  const { group, invites } = details;
  const actionError = h("div", { id: "action-error" });
  const dissolve = h("button", { type: "button", id: "dissolve", class: "danger", onclick: async () => {
    if (!(await confirmDialog("Dissolve this group?",
      `Its ${group.member_count} member${group.member_count === 1 ? "" : "s"} lose it, and its invites and records are deleted. The members' accounts stay. This cannot be undone.`,
      "Dissolve"))) return;
    try {
      await api("DELETE", `/v1/admin/groups/${encodeURIComponent(id)}`);
      location.hash = "#/groups";
    } catch (error) {
      actionError.replaceChildren(errorBox(error));
    }
  } }, "Dissolve");
  const memberRows = (group.members || []).map((member) => h("tr", { class: "link", "data-member-id": member.user_id,
      tabindex: "0", onclick: () => { location.hash = `#/users/${member.user_id}`; } },
    h("td", {}, h("div", {}, member.display_name || h("span", { class: "muted" }, "(no name)")),
      h("div", { class: "muted mono" }, member.user_id)),
    h("td", {}, h("span", { class: `badge role ${member.role}` }, member.role)),
    h("td", {}, member.email || h("span", { class: "muted" }, "not shared")),
    h("td", { title: when(member.joined_at) }, ago(member.joined_at))));
  const inviteRows = invites.map((invite) => h("tr", { "data-invite-id": invite.id },
    h("td", { class: "mono" }, invite.id), h("td", {}, invite.role), h("td", {}, `${invite.uses} of ${invite.max_uses}`),
    h("td", {}, when(invite.expires_at)), h("td", { class: "mono" }, invite.created_by)));
  showFor(ticket, back(),
    h("div", { class: "head" },
      h("div", {}, h("h1", { id: "group-title" }, group.name, " ", h("span", { class: "badge" }, group.kind)),
        h("p", { class: "muted" }, h("span", { class: "mono" }, group.id),
          ` · created ${when(group.created_at)} · when the owner's account is deleted: ${group.on_owner_deleted}`)),
      h("div", { class: "actions" }, dissolve)),
    actionError,
    h("div", { class: "card" }, h("h2", {}, `Members (${group.member_count})`),
      h("table", { id: "members" }, h("thead", {}, h("tr", {}, ["Member", "Role", "Email", "Joined"].map((t) => h("th", {}, t)))),
        h("tbody", {}, memberRows))),
    h("div", { class: "card" }, h("h2", {}, "Pending invites"),
      inviteRows.length ? h("table", { id: "invites" }, h("thead", {}, h("tr", {}, ["Invite", "Role", "Used", "Expires", "Created by"].map((t) => h("th", {}, t)))),
        h("tbody", {}, inviteRows)) : empty("No pending invites", "Codes are shown only to the member who created them.")));
}

async function activityView() {
  const ticket = generation;
  show(h("h1", {}, "Activity"), h("p", { class: "loading" }, "Loading…"));
  let stats;
  try {
    stats = await api("GET", "/v1/admin/stats");
  } catch (error) {
    showFor(ticket, h("h1", {}, "Activity"), errorBox(error));
    return;
  }
  const stat = (value, label, id) => h("div", { class: "stat", id }, h("div", { class: "value" }, value.toLocaleString()), h("div", { class: "label" }, label));
  const count = (days) => days.reduce((sum, day) => sum + day.count, 0);
  showFor(ticket, h("div", { class: "head" }, h("div", {}, h("h1", {}, "Activity"), h("p", { class: "muted" }, "The last 30 days, in UTC days."))),
    h("div", { class: "grid" },
      stat(stats.accounts, "Accounts", "stat-accounts"), stat(stats.guests, "Guests", "stat-guests"),
      stat(stats.disabled, "Disabled", "stat-disabled"), stat(stats.active["1d"], "Active today", "stat-active-1d"),
      stat(stats.active["7d"], "Active, 7 days", "stat-active-7d"), stat(stats.active["30d"], "Active, 30 days", "stat-active-30d")),
    h("div", { class: "card chart" }, h("h2", {}, "Sign-ins per day"),
      stats.sign_ins_per_day.length ? [chart(stats.sign_ins_per_day),
        h("div", { class: "legend" }, ["apple", "google", "other"].map((name) => h("span", {}, h("span", { class: `swatch ${name}` }), name)))]
        : empty("No sign-ins yet", "Sign-ins of the last 30 days appear here.")),
    h("div", { class: "grid" }, stat(count(stats.merges_per_day), "Guest merges, 30 days", "stat-merges"),
      stat(count(stats.reuse_detections_per_day), "Refresh-token reuse detected, 30 days", "stat-reuse")));
}

async function providersView() {
  const ticket = generation;
  show(h("h1", {}, "Providers"), h("p", { class: "loading" }, "Loading…"));
  let list;
  try {
    list = await api("GET", "/v1/admin/providers");
  } catch (error) {
    showFor(ticket, h("h1", {}, "Providers"), errorBox(error));
    return;
  }
  const keyState = (item) => {
    if (item.last_error) return h("span", { class: "badge disabled" }, "Failing");
    if (item.key_ids.length) return h("span", { class: "badge active" }, "Keys held");
    return h("span", { class: "badge guest" }, "Not fetched yet");
  };
  const card = (item) => h("div", { class: "card provider-card", "data-provider": item.name },
    h("div", { class: "head" }, h("h2", {}, provider(item.name),
      item.display_name.toLowerCase() === item.name ? "" : h("span", { class: "muted" }, ` ${item.display_name}`)), keyState(item)),
    h("dl", { class: "facts" },
      h("dt", {}, "Kind"), h("dd", {}, item.kind),
      h("dt", {}, "Issuer"), h("dd", { class: "mono" }, item.issuer),
      h("dt", {}, "Audiences"), h("dd", { class: "mono audiences" }, item.client_ids.join(", ")),
      h("dt", {}, "Keys from"), h("dd", { class: "mono" }, item.keys_url),
      h("dt", {}, "Nonce"), h("dd", {}, item.nonce_required ? "required" : "optional"),
      h("dt", {}, "Keys"), h("dd", { class: "mono key-ids" }, item.key_ids.length ? item.key_ids.join(", ") : "—"),
      h("dt", {}, "Fetched"), h("dd", {}, when(item.keys_fetched_at)),
      h("dt", {}, "Last error"), h("dd", { class: "last-error" },
        item.last_error ? `${when(item.last_error.at)}: ${item.last_error.message}` : "none"),
      h("dt", {}, "Last refused token"), h("dd", { class: "last-refusal" },
        item.last_refusal ? `${when(item.last_refusal.at)}: ${item.last_refusal.reason}`
          + (item.last_refusal.kid ? ` (kid ${item.last_refusal.kid})` : " (no kid)") : "none")));
  showFor(ticket, h("div", { class: "head" }, h("div", {}, h("h1", {}, "Providers"),
    h("p", { class: "muted" }, "Configured sign-in providers. Keys are fetched when a token first needs them."))),
    ...(list.providers.length ? list.providers.map((item) => card(item))
      : [empty("No providers", "Set LANYARD_APPLE_CLIENT_IDS, LANYARD_GOOGLE_CLIENT_IDS or LANYARD_OIDC_PROVIDERS.")]));
}

// MARK: Imports (switching day)

const SOURCE_NAMES = { firebase: "Firebase", supabase: "Supabase", clerk: "Clerk", auth0: "Auth0", jsonl: "Lanyard lines" };
function sourceName(source) { return Object.hasOwn(SOURCE_NAMES, source) ? SOURCE_NAMES[source] : source; }

function conflictTotal(report) {
  return report ? Object.values(report.conflict_counts || {}).reduce((sum, count) => sum + count, 0) : 0;
}

/** "true" once its undo has finished (`accounts_removed`), "partly" while an undo begun has not, else "false". */
function undoState(batch) {
  if (!batch.undone_at) return "false";
  return batch.accounts_removed === null || batch.accounts_removed === undefined ? "partly" : "true";
}

function batchState(batch) {
  const state = undoState(batch);
  const running = state === "false" && !batch.finished_at;
  const [badge, label] = running ? ["guest", "Running or stopped"]
    : { true: ["disabled", "Undone"], partly: ["guest", "Undoing"], false: ["active", "Imported"] }[state];
  return h("span", { class: `badge ${badge}`, id: "batch-state", "data-undone": state }, label);
}

function plural(count, word) { return `${count.toLocaleString()} ${word}${count === 1 ? "" : "s"}`; }

/** Per legacy source, how many accounts have signed in to Lanyard (by the bridge or a provider) and how many not yet. */
function crossingCard(count) {
  const waiting = count.accounts - count.signed_in;
  return h("div", { class: "stat crossing", "data-source": count.source },
    h("div", { class: "label" }, sourceName(count.source)),
    h("div", { class: "value" }, h("span", { class: "crossed" }, count.signed_in.toLocaleString()),
      h("span", { class: "of muted" }, ` of ${count.accounts.toLocaleString()}`)),
    h("progress", { max: String(Math.max(count.accounts, 1)), value: String(count.signed_in),
      "aria-label": `${sourceName(count.source)} accounts that have crossed` }),
    h("div", { class: "label" }, "have crossed · ", h("span", { class: "waiting" }, waiting.toLocaleString()), " not yet"));
}

async function importsView() {
  const ticket = generation;
  show(h("h1", {}, "Imports"), h("p", { class: "loading" }, "Loading…"));
  let list;
  try {
    list = await api("GET", "/v1/admin/imports");
  } catch (error) {
    showFor(ticket, h("h1", {}, "Imports"), errorBox(error));
    return;
  }
  const open = (batch) => { location.hash = `#/imports/${batch.id}`; };
  const rows = list.batches.map((batch) => {
    const report = batch.report;
    return h("tr", { class: "link", "data-batch-id": batch.id, tabindex: "0", "data-undone": undoState(batch),
        onclick: () => open(batch), onkeydown: (event) => { if (event.key === "Enter") open(batch); } },
      h("td", {}, h("div", { class: "mono" }, batch.id), h("div", { class: "muted" }, `${batch.origin} · by ${batch.actor}`)),
      h("td", { class: "source" }, sourceName(batch.source)), h("td", { class: "mono" }, batch.format),
      h("td", { title: when(batch.started_at) }, ago(batch.started_at)),
      h("td", { class: "created" }, batch.accounts_created.toLocaleString()),
      h("td", { class: "signed-in" }, batch.accounts_signed_in.toLocaleString()),
      h("td", { class: "conflicts" }, report ? conflictTotal(report).toLocaleString() : "—"),
      h("td", { class: "warnings" }, report ? report.warnings.length.toLocaleString() : "—"),
      h("td", {}, batchState(batch)));
  });
  showFor(ticket, h("div", { class: "head" }, h("div", {}, h("h1", {}, "Imports"),
      h("p", { class: "muted" }, "Switching day: the people imported from another system, and who has crossed since."))),
    h("h2", {}, "Who has crossed"),
    list.sources.length ? h("div", { class: "grid", id: "crossing" }, list.sources.map(crossingCard))
      : h("div", { class: "card", id: "crossing" }, empty("No accounts from another system",
        "Accounts carrying a legacy id (imported, or made by the bridge) are counted here.")),
    h("p", { class: "muted hint" }, "Crossed: the account has been signed into here at least once, by the app's bridge call or a sign-in with Apple, Google or email. Not yet: it carries an old id and nobody has signed into it since."),
    h("div", { class: "card" }, h("h2", {}, "Batches"),
      rows.length ? h("table", { id: "batches" },
        h("thead", {}, h("tr", {}, ["Batch", "Source", "Format", "When", "Created", "Signed in since", "Conflicts", "Warnings", ""]
          .map((t) => h("th", {}, t)))),
        h("tbody", {}, rows))
        : empty("No imports yet", "Run lanyard import … (try --dry-run first), or POST /v1/admin/imports with Lanyard's JSON lines.")));
}

async function batchView(id, outcome) {
  const ticket = generation;
  const back = () => h("a", { href: "#/imports", class: "back" }, "← Imports");
  show(back(), h("p", { class: "loading" }, "Loading…"));
  let batch;
  try {
    batch = await api("GET", `/v1/admin/imports/${encodeURIComponent(id)}`);
  } catch (error) {
    showFor(ticket, back(), error.status === 404 ? empty("No such import batch", "Check the id (imp_…).") : errorBox(error));
    return;
  }
  const report = batch.report;
  const actionError = h("div", { id: "action-error" });
  const path = `/v1/admin/imports/${encodeURIComponent(id)}/undo`;
  const undo = async (force) => {
    try {
      const result = await api("POST", force ? `${path}?force=1` : path);
      batchView(id, result);
    } catch (error) {
      if (error.status === 409 && error.details.reason === "signed_in_since") refused(error);
      else actionError.replaceChildren(errorBox(error));
    }
  };
  // The server refuses while someone uses one of the batch's accounts; the operator may insist, as the API allows.
  const refused = (error) => {
    const count = Number(error.details.accounts_signed_in) || batch.accounts_signed_in;
    actionError.replaceChildren(h("div", { class: "error", id: "undo-refused", role: "alert" },
      h("p", {}, h("strong", {}, "Undo refused. "), error.message, "."),
      h("p", {}, `${plural(count, "account")} of this batch ${count === 1 ? "has" : "have"} been signed into since the import: `
        + "undoing now would take them from people using them. Nothing was removed."),
      h("button", { type: "button", id: "force-undo", class: "danger", onclick: async () => {
        if (await confirmDialog("Remove the accounts in use too?",
          `All ${plural(batch.accounts_created, "account")} of this batch are removed, the ${count.toLocaleString()} signed into among them: `
          + "their sessions end now and Apple is told of their identities. This cannot be undone.", "Force undo")) undo(true);
      } }, "Force undo…")));
  };
  const finished = undoState(batch) === "true";
  const showAccounts = finished ? null : h("button", { type: "button", id: "batch-accounts", onclick: () => {
    Object.assign(usersState, { query: "", filter: "", provider: "", disabled: false, batch: batch.id, cursors: [null] });
    location.hash = "#/users";
  } }, "Its accounts");
  const undoButton = finished ? null : h("button", { type: "button", id: "undo", class: "danger", onclick: async () => {
    if (await confirmDialog("Undo this import?",
      `Removes the ${plural(batch.accounts_created, "account")} this batch created. Refused if someone has signed into one since`
      + (batch.accounts_signed_in ? ` (${batch.accounts_signed_in.toLocaleString()} so far).` : "."), "Undo")) undo(false);
  } }, "Undo import");
  const stat = (value, label, name) => h("div", { class: "stat", "data-stat": name },
    h("div", { class: "value" }, value === undefined || value === null ? "—" : value.toLocaleString()), h("div", { class: "label" }, label));
  const identities = report ? Object.entries(report.identities || {}).sort(([a], [b]) => a.localeCompare(b)) : [];
  const counts = report ? Object.entries(report.conflict_counts || {}).sort(([a], [b]) => a.localeCompare(b)) : [];
  const conflicts = report ? report.conflicts : [];
  const conflictRows = conflicts.map((conflict) => h("tr", { "data-conflict-kind": conflict.kind },
    h("td", {}, conflict.line), h("td", { class: "mono" }, conflict.legacy_id || "—"),
    h("td", {}, h("span", { class: "badge guest" }, conflict.kind)), h("td", {}, conflict.provider || "—"),
    h("td", {}, conflict.account_id ? h("a", { href: `#/users/${conflict.account_id}`, class: "mono" }, conflict.account_id) : "—"),
    h("td", {}, conflict.message, conflict.line_skipped ? h("span", { class: "muted" }, " (line left out)") : null)));
  const summary = h("p", { class: "muted" }, h("span", { class: "mono" }, batch.id),
    ` · ${batch.format} from ${batch.origin} · by ${batch.actor === "cli" ? "lanyard import" : "the admin API"}`
    + ` · started ${when(batch.started_at)}` + (batch.finished_at ? `, finished ${when(batch.finished_at)}` : ""));
  showFor(ticket, back(),
    h("div", { class: "head" },
      h("div", {}, h("h1", { id: "batch-title" }, `${sourceName(batch.source)} import `, batchState(batch)), summary),
      h("div", { class: "actions" }, showAccounts, undoButton)),
    outcome ? h("p", { class: "notice", id: "undo-result" }, `Removed ${plural(outcome.removed, "account")}.`
      + (outcome.kept_signed_in ? ` Kept ${plural(outcome.kept_signed_in, "account")} someone signed into while the undo ran.` : "")) : null,
    batch.undone_at && finished ? h("p", { class: "notice", id: "undone" },
      `Undone ${when(batch.undone_at)}: ${plural(batch.accounts_removed, "account")} removed. Importing the file again brings them back.`)
      : batch.undone_at ? h("p", { class: "notice", id: "undone" },
        `An undo began ${when(batch.undone_at)} and has not finished: undo again to finish it.`) : null,
    actionError,
    h("div", { class: "grid", id: "batch-counts" },
      stat(report?.read, "Records read", "read"), stat(batch.accounts_created, "Accounts created", "created"),
      stat(report?.unchanged, "Already imported", "unchanged"), stat(report?.skipped, "Left out", "skipped"),
      stat(batch.accounts_signed_in, "Signed in since", "signed-in")),
    report ? h("div", { class: "grid" },
      stat(report.guests, "Guests", "guests"), stat(report.disabled, "Disabled", "disabled"),
      stat(report.password_users, "Password users (hashes are never imported)", "password-users"),
      stat(report.password_users_without_email, "Password users with no verified email (bridge only)", "password-users-without-email"))
      : h("p", { class: "notice", id: "no-report" }, batch.finished_at ? "This batch's report could not be read."
        : "No report yet: the import is still running, or stopped before it finished (undo takes back what it wrote)."),
    report ? h("div", { class: "card", id: "report" }, h("h2", {}, "Report"),
      h("dl", { class: "facts" },
        h("dt", {}, "Identities"), h("dd", { id: "report-identities" },
          identities.length ? identities.map(([name, count]) => `${name} ${count.toLocaleString()}`).join(", ") : "none"),
        h("dt", {}, "Conflicts"), h("dd", { id: "report-conflict-counts" },
          counts.length ? counts.map(([kind, count]) => `${kind} ${count.toLocaleString()}`).join(", ") : "none")),
      conflictRows.length ? [
        h("h2", { class: "sub" }, conflictRows.length < conflictTotal(report)
          ? `Conflicts (the first ${conflictRows.length.toLocaleString()} of ${conflictTotal(report).toLocaleString()})` : "Conflicts"),
        h("table", { id: "conflicts" }, h("thead", {}, h("tr", {}, ["Line", "Legacy id", "Kind", "Provider", "Account", "What happened"]
          .map((t) => h("th", {}, t)))), h("tbody", {}, conflictRows))] : null,
      report.warnings.length ? [h("h2", { class: "sub" }, "Warnings"),
        h("ul", { id: "warnings" }, report.warnings.map((warning) => h("li", {}, warning)))] : null) : null);
}

// MARK: Email

const emailState = { status: "" };

async function emailView() {
  const filters = [["", "All"], ["sent", "Sent"], ["retrying", "Retrying"], ["failed", "Failed"]];
  const results = h("div", { id: "delivery-results" }, h("p", { class: "loading" }, "Loading…"));
  const toolbar = h("div", { class: "toolbar filters" }, filters.map(([value, label]) =>
    h("button", { type: "button", class: `small${emailState.status === value ? " active" : ""}`, "data-filter": value || "all",
      onclick: () => { emailState.status = value; emailView(); } }, label)));
  show(h("div", { class: "head" }, h("div", {}, h("h1", {}, "Email deliveries"),
      h("p", { class: "muted" }, "Codes and links sent for sign-in, linking, re-authentication and recovery, newest first."))),
    h("div", { class: "card" }, toolbar, results));
  let rows;
  try {
    const status = emailState.status === "retrying" ? "pending" : emailState.status;
    rows = await api("GET", `/v1/admin/email/deliveries${status ? `?status=${status}` : ""}`);
  } catch (error) {
    results.replaceChildren(errorBox(error));
    return;
  }
  if (emailState.status === "retrying") rows = rows.filter((row) => row.attempts > 0);
  const state = (row) => {
    if (row.status === "sent") return h("span", { class: "badge active" }, "Sent");
    if (row.status === "failed") return h("span", { class: "badge disabled" }, "Failed");
    return h("span", { class: "badge guest" }, row.attempts > 0 ? "Retrying" : "Queued");
  };
  results.replaceChildren(rows.length ? h("table", { id: "deliveries" },
    h("thead", {}, h("tr", {}, ["To", "For", "State", "Attempts", "Queued", "Outcome"].map((t) => h("th", {}, t)))),
    h("tbody", {}, rows.map((row) => h("tr", { "data-delivery-id": row.id, "data-status": row.status },
      h("td", {}, row.user_id ? h("a", { href: `#/users/${row.user_id}` }, row.recipient) : row.recipient),
      h("td", {}, row.intent), h("td", {}, state(row)), h("td", {}, row.attempts),
      h("td", { title: when(row.created_at) }, ago(row.created_at)),
      h("td", { class: row.last_error ? "last-error" : "muted" },
        row.status === "sent" ? `sent ${ago(row.sent_at)}` : row.last_error
          ? `${row.last_error}${row.next_attempt_at ? ` · next try ${when(row.next_attempt_at)}` : ""}` : "—")))))
    : empty("No mail", emailState.status ? "None in this state." : "No code or link has been sent yet."));
}

/** A stacked bar per day for the last 30 days: Apple, Google, then anything else. */
function chart(days) {
  const byDate = new Map(days.map((day) => [day.date, day]));
  const dates = [];
  for (let offset = 29; offset >= 0; offset--) dates.push(new Date(Date.now() - offset * 86400000).toISOString().slice(0, 10));
  const maximum = Math.max(1, ...days.map((day) => day.count));
  const width = 900, height = 220, gap = 4, bar = width / dates.length - gap;
  const colors = { apple: "#111", google: "#1a73e8", other: "#868e96" };
  const bars = dates.flatMap((date, index) => {
    const day = byDate.get(date);
    if (!day) return [];
    let y = height;
    const parts = Object.entries(day.by_provider || {}).map(([name, value]) => [colors[name] ? name : "other", value]);
    return parts.map(([name, value]) => {
      const size = (value / maximum) * (height - 10);
      y -= size;
      return svg("rect", { x: index * (bar + gap), y, width: bar, height: size, rx: 2, fill: colors[name], "data-date": date },
        svg("title", {}, `${date}: ${value} ${name}`));
    });
  });
  return svg("svg", { viewBox: `0 0 ${width} ${height + 20}`, role: "img", "aria-label": "Sign-ins per day", id: "signins-chart" },
    svg("line", { x1: 0, y1: height, x2: width, y2: height, stroke: "#e3e6eb" }), bars,
    svg("text", { x: 0, y: height + 16, "font-size": 11, fill: "#5f6673" }, dates[0]),
    svg("text", { x: width, y: height + 16, "font-size": 11, fill: "#5f6673", "text-anchor": "end" }, dates[dates.length - 1]));
}

// MARK: Sign-in and routing

function signOut(message) {
  sessionStorage.removeItem(KEY);
  route();
  if (message) {
    const box = $("#signin-error");
    box.textContent = message;
    box.hidden = false;
  }
}

async function signIn(event) {
  event.preventDefault();
  const box = $("#signin-error");
  box.hidden = true;
  sessionStorage.setItem(KEY, $("#key").value);
  try {
    await api("GET", "/v1/admin/stats");
    $("#key").value = "";
    if (!location.hash || location.hash === "#/") location.hash = "#/users"; else route();
  } catch (error) {
    sessionStorage.removeItem(KEY);
    box.textContent = error.status === 403 ? "That key is not this server's admin key." : error.message;
    box.hidden = false;
  }
}

function route() {
  generation += 1;
  const signedIn = Boolean(sessionStorage.getItem(KEY));
  $("#signin-view").hidden = signedIn;
  $("#bar").hidden = !signedIn;
  $("#view").hidden = !signedIn;
  if (!signedIn) { $("#key").focus(); return; }
  const path = location.hash.replace(/^#/, "") || "/users";
  $("#nav-users").classList.toggle("active", path.startsWith("/users"));
  $("#nav-groups").classList.toggle("active", path.startsWith("/groups"));
  $("#nav-activity").classList.toggle("active", path === "/activity");
  $("#nav-providers").classList.toggle("active", path === "/providers");
  $("#nav-email").classList.toggle("active", path === "/email");
  $("#nav-imports").classList.toggle("active", path.startsWith("/imports"));
  const user = path.match(/^\/users\/(.+)$/);
  const group = path.match(/^\/groups\/(.+)$/);
  const batch = path.match(/^\/imports\/(.+)$/);
  if (user) userView(decodeURIComponent(user[1]));
  else if (group) groupView(decodeURIComponent(group[1]));
  else if (batch) batchView(decodeURIComponent(batch[1]));
  else if (path === "/imports") importsView();
  else if (path === "/groups") groupsView();
  else if (path === "/activity") activityView();
  else if (path === "/providers") providersView();
  else if (path === "/email") emailView();
  else usersView();
}

document.addEventListener("DOMContentLoaded", () => {
  $("#signin-form").addEventListener("submit", signIn);
  $("#signout").addEventListener("click", () => signOut());
  window.addEventListener("hashchange", route);
  route();
});
