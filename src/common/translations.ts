// The languages of a lab's texts and the shape of their translations: the part of the lab format the
// SPA needs, kept apart from lab.ts so the page does not load the lab file's validation.
import * as z from "zod/mini";

/** The languages a lab's texts may come in: English, Japanese and Simplified Chinese. */
export const textLanguages = ["en", "ja", "zh"] as const;
export type TextLanguage = (typeof textLanguages)[number];
/** Languages besides English: their texts are optional and fall back to the plain (English) one. */
export const translatedLanguages = ["ja", "zh"] as const;
export type TranslatedLanguage = (typeof translatedLanguages)[number];
/** One text's Japanese and Chinese versions, where the lab file gives them. */
export const Translations = z.object({ ja: z.optional(z.string()), zh: z.optional(z.string()) });
export type Translations = z.output<typeof Translations>;
