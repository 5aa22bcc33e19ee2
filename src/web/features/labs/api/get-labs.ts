import { queryOptions, useQuery } from "@tanstack/react-query";
import { useCallback } from "react";
import * as z from "zod/mini";
import { LabSummary } from "../../../../common/api.ts";
import { apiRequest } from "../../../lib/api-client.ts";
import { useLanguage } from "../../../lib/i18n/use-language.ts";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import { labKeys } from "./lab-keys.ts";
import { localizeLab, type LocalizedLab } from "../../../lib/localize-lab.ts";

const LabList = z.array(LabSummary);

export function getLabs(signal?: AbortSignal): Promise<LabSummary[]> {
  return apiRequest("/labs", { schema: LabList, signal });
}

export const labsQueryOptions = () =>
  queryOptions({
    queryKey: labKeys.list(),
    queryFn: ({ signal }) => getLabs(signal),
    // The catalog changes when an instructor deploys new lab files, not while a class works.
    staleTime: 5 * 60_000,
  });

/** The labs with their texts in the page's language. */
export function useLabs() {
  const { language } = useLanguage();
  // A stable selector per language, so TanStack Query keeps the result until the data or language changes.
  const select = useCallback(
    (labs: LabSummary[]): LocalizedLab[] => labs.map((lab) => localizeLab(lab, language)),
    [language],
  );
  return useQuery({ ...labsQueryOptions(), select });
}

/** Lab titles by id, for tables that only carry the lab id; an unknown lab shows its id. */
export function useLabTitles(): (labId: string) => LocalText {
  const { language } = useLanguage();
  const select = useCallback(
    (labs: LabSummary[]): ReadonlyMap<string, LocalText> =>
      new Map(labs.map((lab) => [lab.id, localizeLab(lab, language).title])),
    [language],
  );
  const { data } = useQuery({ ...labsQueryOptions(), select });
  return useCallback(
    (labId: string) => data?.get(labId) ?? { text: labId, lang: language },
    [data, language],
  );
}
