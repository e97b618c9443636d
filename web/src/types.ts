// Wire types of the HTTP+JSON API: generated from internal/api into
// api.gen.ts (docs/api.md, docs/web-protocol.md); this file adds what only
// the web sees. Fields the server may omit are optional.

export type {
  AnswerRequest,
  CreateRequest,
  Device,
  DeviceConflict,
  DialogKind,
  DirEntry,
  DirListing,
  DownloadRequest,
  DownloadResult,
  Field,
  FileEdit,
  GitDiff,
  GitDiffRequest,
  GitFile,
  GitFileDiff,
  GitStatus,
  GitSummary,
  KillRequest,
  Kind,
  LiveOutput,
  Notification,
  Option,
  PatchHunk,
  Question,
  QuestionOption,
  Resumable,
  Session,
  Status,
  Subagent,
  Timeline,
  TimelineItem,
  TimelineKind,
  Todos,
  ToolCall,
  TurnFile,
  Usage,
  Waiting,
} from './api.gen';
import type { Device, EventType as WireEventType, Notification, Session, Status } from './api.gen';

/** An event of the stream, or the WebSocket's keepalive. */
export type EventType = WireEventType | 'ping';

export interface CorralEvent {
  seq?: number;
  type: EventType;
  time?: string;
  session?: Session;
  sessions?: Session[];
  id?: string;
  prev?: Status;
  notify?: boolean;
  device?: Device;
  devices?: Device[];
  notification?: Notification;
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
  /** The session's state that the notification is about. */
  reason: Status;
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
