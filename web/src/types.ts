// Wire types of the HTTP+JSON API (internal/api/types.go, docs/api.md,
// docs/web-protocol.md). Fields the server may omit are optional.

export type Status =
  | 'starting'
  | 'idle'
  | 'busy'
  | 'needs-input'
  | 'review'
  | 'unknown'
  | 'exited';

export type Kind = 'claude' | 'shell' | 'external';

export interface Option {
  /** The option's number as drawn (1-based): what an answer names. */
  number: number;
  label: string;
  description?: string;
  /** Choosing it takes text ("Type something"). */
  text?: boolean;
  /** A multi-select option's state. */
  checked?: boolean | null;
}

export interface QuestionOption {
  label: string;
  description?: string;
}

export interface Question {
  header?: string;
  question: string;
  multi_select?: boolean;
  options: QuestionOption[];
}

/** A field of an MCP elicitation form, as drawn. */
export interface DialogField {
  name: string;
  /** text (strings and numbers), boolean, choice. */
  kind: string;
  /** As shown: '' when not set; 'true'/'false'; a choice's label. */
  value?: string;
  /** Required and not valid yet. */
  missing?: boolean;
  valid?: boolean;
  description?: string;
  /** A choice field's labels, when the screen shows them. */
  choices?: string[] | null;
}

/** Dialog kinds (api.Dialog*). */
export type DialogKind =
  | 'permission'
  | 'question'
  | 'plan'
  | 'trust'
  | 'api_key'
  | 'elicitation'
  | 'bypass_permissions'
  | 'mcp_server'
  | 'settings_error'
  | 'choice';

export interface Waiting {
  /** Names the dialog; an answer must carry it. Set once it was read off the screen. */
  dialog_id?: string;
  kind: DialogKind;
  tool?: string;
  input?: unknown;
  message?: string;
  suggestions?: unknown;
  title?: string;
  question?: string;
  body?: string;
  options?: Option[] | null;
  multi_select?: boolean;
  questions?: Question[] | null;
  /** The question on the screen now; -1: the final "Submit answers" step. Omitted: 0. */
  current?: number;
  plan?: string;
  /** An elicitation form's fields. */
  fields?: DialogField[] | null;
  /** What the dialog asks, in a few words. */
  summary?: string;
}

export interface AnswerRequest {
  dialog: string;
  option?: number;
  options?: number[];
  choice?: 'yes' | 'no' | 'always';
  text?: string;
  /** An elicitation form's values by field name (with Accept). */
  fields?: Record<string, string>;
}

/** A subagent (the Agent tool) that a session runs now. */
export interface Subagent {
  description?: string;
  type?: string;
  /** Started with run_in_background. */
  background?: boolean;
}

/** A session's TodoWrite progress. */
export interface Todos {
  done: number;
  total: number;
  /** The item in progress. */
  current?: string;
}

export interface Usage {
  model?: string;
  model_name?: string;
  context_percent?: number;
  context_size?: number;
  input_tokens?: number;
  output_tokens?: number;
  cache_read_tokens?: number;
  cache_creation_tokens?: number;
  cost_usd?: number;
  rate_limits?: unknown;
}

export interface Session {
  id: string;
  device?: string;
  name: string;
  dir: string;
  kind: Kind | string;
  status: Status | string;
  claude_session_id?: string;
  current_tool?: string;
  waiting_for?: Waiting | null;
  error?: string;
  error_message?: string;
  compacting?: boolean;
  busy_since?: string;
  last_message?: string;
  last_prompt?: string;
  usage?: Usage;
  subagents?: Subagent[] | null;
  todos?: Todos | null;
  claude_pid?: number;
  transcript_path?: string;
  args?: string[];
  created_at: string;
  updated_at?: string;
  /** Its machine is not connected to the hub: this is the last known state. */
  offline?: boolean;
}

export type EventType = 'snapshot' | 'session' | 'removed' | 'resync' | 'ping';

export interface CorralEvent {
  seq?: number;
  type: EventType | string;
  time?: string;
  session?: Session;
  sessions?: Session[];
  id?: string;
  prev?: string;
  notify?: boolean;
}

export interface DirEntry {
  name: string;
  path: string;
  is_dir: boolean;
}

export interface DirListing {
  path: string;
  parent?: string;
  entries: DirEntry[] | null;
}

export interface Resumable {
  id: string;
  first_prompt: string;
  last_prompt?: string;
  last_activity: string;
  size: number;
  path: string;
  /** The corral session running this conversation now (resuming it is refused: conversation_running). */
  running_in?: string;
  running_name?: string;
  /** A live Claude runs it, in corral or not. */
  running?: boolean;
}

export interface FileEdit {
  path: string;
  old: string;
  new: string;
  replace_all?: boolean;
}

export interface ToolCall {
  id: string;
  name: string;
  input?: unknown;
  done: boolean;
  result?: string;
  is_error?: boolean;
  truncated?: boolean;
  edits?: FileEdit[] | null;
}

export interface TimelineItem {
  id: string;
  time?: string;
  /** prompt, text, thinking, tool, interrupt, compaction (or compact), api_error, command */
  kind: string;
  text?: string;
  status?: number;
  tool?: ToolCall | null;
}

export interface Timeline {
  items: TimelineItem[] | null;
  version: number;
}

export interface WebConfig {
  vapid_public_key?: string;
  version?: string;
  /** The daemon's build: its git commit and date (RFC 3339), when stamped. */
  commit?: string;
  build_date?: string;
  webhook_url?: string;
  hostname?: string;
  /** Not in docs/web-protocol.md: used to shorten directories with ~ when present. */
  home?: string;
}

export interface NotificationEntry {
  seq: number;
  /** The log's id (entries from GET /api/v1/notifications). */
  id?: number;
  time: string;
  /** The machine, on a hub. */
  device?: string;
  session_id: string;
  session_name: string;
  reason: string;
  message: string;
  /** Client side: came from a live event on this page. */
  live?: boolean;
}

export interface AuthMe {
  authenticated?: boolean;
  password_set?: boolean;
  /** A hub: the login form asks for a user name. */
  multi_user?: boolean;
  /** Who is logged in (200 only). */
  user?: string;
}

/** What POST /api/v1/auth/login takes: a user and a password, or a login link's or an API token. */
export type LoginRequest = { user?: string; password: string } | { token: string };

/** A browser logged in to the account (GET /api/v1/auth/sessions): a "signed-in device". */
export interface WebSession {
  id: string;
  user: string;
  created_at: string;
  last_seen: string;
  expires_at: string;
  user_agent?: string;
  address?: string;
  /** This very browser. */
  current?: boolean;
}

/** A machine of the logged-in user (GET /api/v1/devices). */
export interface Device {
  id: string;
  name: string;
  online: boolean;
  hostname?: string;
  os?: string;
  version?: string;
  last_seen?: string;
  /** Fingerprint of the key the machine proves (SHA256:…). */
  key?: string;
  /** Set while another machine tries to connect with this one's identity. */
  conflict?: DeviceConflict;
}

/** The latest connection the hub refused because the machine was already connected and answering. */
export interface DeviceConflict {
  at: string;
  count: number;
  address?: string;
  /** What the other machine claims to be called. */
  hostname?: string;
}

export interface DownloadRequest {
  url: string;
  /** Relative to the session's folder; empty: the URL's file name. */
  path?: string;
  overwrite?: boolean;
}

export interface DownloadResult {
  path: string;
  size: number;
  sha256: string;
}

export interface CreateRequest {
  dir: string;
  name?: string;
  resume?: string;
  shell?: boolean;
  args?: string[];
  cols?: number;
  rows?: number;
  device?: string;
}
