// Rows of the ended sign-ins tables as both stores read them, and the records they make. A row's seq
// is left to each store: how a poll's position follows from it is where the two differ.
import { epochMsOf, type StoredTime } from "../../db/column-values.ts";
import type { EndedSignIn, SignInCutOff } from "./repository.ts";

export interface EndedSignInRow {
  id: string;
  expires_at: StoredTime;
}

export interface CutOffRow {
  username: string;
  issued_up_to: StoredTime;
  expires_at: StoredTime;
}

export const toEndedSignIn = (row: EndedSignInRow): EndedSignIn => ({
  id: row.id,
  expiresAt: epochMsOf(row.expires_at),
});

export const toCutOff = (row: CutOffRow): SignInCutOff => ({
  username: row.username,
  issuedUpTo: epochMsOf(row.issued_up_to),
  expiresAt: epochMsOf(row.expires_at),
});
