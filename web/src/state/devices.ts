// The machines (GET /api/v1/devices) and the sidebar's grouping by machine.

import { batch, computed, signal } from '@preact/signals';
import { api } from '../api';
import type { Device, Session } from '../types';
import { auth, multiUser } from './auth';
import { config, sessions } from './sessions';

/** The machines GET /api/v1/devices lists (a single-machine corral serve lists at most itself). */
export const devices = signal<Device[]>([]);
export const devicesLoaded = signal(false);
/** Several machines (a hub): the sidebar groups sessions by machine, new sessions ask which. */
export const machineMode = computed(() => multiUser.value || devices.value.length > 1 || sessions.value.some((s) => !!s.device));

/**
 * Every machine to show: the listed ones, plus names that only sessions carry
 * (listed on the next refresh; until then, online unless all their sessions are offline).
 */
export const knownDevices = computed<Device[]>(() => {
  const out = [...devices.value];
  const seen = new Set(out.map((d) => d.name));
  const extra = new Map<string, boolean>();
  for (const s of sessions.value) {
    if (!s.device || seen.has(s.device)) continue;
    extra.set(s.device, (extra.get(s.device) ?? false) || !s.offline);
  }
  for (const [name, online] of extra) out.push({ id: name, name, online });
  return out.sort((a, b) => a.name.localeCompare(b.name));
});

export function deviceNamed(name: string | undefined): Device | undefined {
  if (!name) return undefined;
  return knownDevices.value.find((d) => d.name === name);
}

export interface MachineGroup {
  name: string;
  device?: Device;
  list: Session[];
}

/** The sidebar's groups in machine mode: every machine, with its sessions (maybe none). */
export const machineGroups = computed<MachineGroup[]>(() => {
  const m = new Map<string, MachineGroup>();
  for (const d of knownDevices.value) m.set(d.name, { name: d.name, device: d, list: [] });
  const local = config.value.hostname || 'this machine';
  for (const s of sessions.value) {
    const k = s.device || local;
    let g = m.get(k);
    if (!g) {
      g = { name: k, list: [] };
      m.set(k, g);
    }
    g.list.push(s);
  }
  return [...m.values()].sort((a, b) => a.name.localeCompare(b.name));
});

let devicesInFlight: Promise<void> | null = null;
let devicesAgain = false;

/** Refresh the machine list (one request at a time; a call meanwhile asks for one more). */
export function loadDevices(): Promise<void> {
  if (devicesInFlight) {
    devicesAgain = true;
    return devicesInFlight;
  }
  devicesInFlight = (async () => {
    try {
      do {
        devicesAgain = false;
        try {
          const list = (await api.devices()) ?? [];
          batch(() => {
            devices.value = Array.isArray(list) ? list : [];
            devicesLoaded.value = true;
          });
        } catch {
          /* keep what we have; the next refresh tries again */
        }
      } while (devicesAgain && auth.value === 'ok');
    } finally {
      devicesInFlight = null;
    }
  })();
  return devicesInFlight;
}

/** The machines as the events say (a snapshot's devices, then device events): nothing is polled. */
export function setDevices(list: Device[]): void {
  batch(() => {
    devices.value = list;
    devicesLoaded.value = true;
  });
}

export function upsertDevice(d: Device): void {
  const list = devices.value.filter((x) => x.id !== d.id);
  list.push(d);
  list.sort((a, b) => a.name.localeCompare(b.name));
  devices.value = list;
}

export function removeDevice(id: string): void {
  devices.value = devices.value.filter((x) => x.id !== id);
}

/** A snapshot names machines we do not list yet: refresh (a replica's list can lag its events). */
export function checkDevices(list: Session[]): void {
  if (list.some((s) => s.device && !devices.value.some((d) => d.name === s.device))) void loadDevices();
}

let mismatchAt = 0;
/** A session names a machine we do not know, or contradicts its online state: refresh. */
export function checkDevice(s: Session): void {
  if (!s.device) return;
  const d = devices.value.find((x) => x.name === s.device);
  if (!d) {
    void loadDevices();
    return;
  }
  if (d.online === !!s.offline && Date.now() - mismatchAt > 2000) {
    mismatchAt = Date.now();
    void loadDevices();
  }
}

export function resetDevices(): void {
  batch(() => {
    devices.value = [];
    devicesLoaded.value = false;
  });
}
