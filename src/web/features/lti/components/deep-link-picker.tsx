import { useEffect, useId, useMemo, useRef, useState, type FormEvent, type ReactNode } from "react";
import { Trans, useTranslation } from "react-i18next";
import type { LtiDeepLinkAnswer, LtiDeepLinkRequest } from "../../../../common/lti-api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { LangText } from "../../../components/lang-text.tsx";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import { useLanguage } from "../../../lib/i18n/use-language.ts";
import { isDeepLinkGone, useAnswerLtiDeepLink } from "../api/deep-links.ts";
import { choiceProblem, chosenInCatalogOrder, maxLabsPerAnswer, toggleLab } from "../lib/deep-link-choice.ts";
import { localizeOffer } from "../lib/offered-labs.ts";
import { DeepLinkGone } from "./deep-link-gone.tsx";

/**
 * The labs an instructor adds to an LMS course: chosen here, signed by the BFF, and handed to the LMS
 * by the browser itself (a form the BFF's answer page posts to the LMS's return URL), as Deep Linking
 * 2.0 has it.
 */
export function DeepLinkPicker({
  request,
  renderDescription,
}: {
  request: LtiDeepLinkRequest;
  /** A lab's description as the catalog shows it. */
  renderDescription: (description: LocalText) => ReactNode;
}) {
  const { t } = useTranslation();
  const answer = useAnswerLtiDeepLink(request.id);
  // The choice lives here, above every error the answer may meet, so no error clears it.
  const [chosen, setChosen] = useState<string[]>([]);
  const [postSelfChecks, setPostSelfChecks] = useState(false);
  const [triedToSend, setTriedToSend] = useState(false);
  const { language } = useLanguage();
  const labs = useMemo(() => localizeOffer(request.labs, language), [request.labs, language]);
  const problem = choiceProblem(chosen);
  const selfCheckHintId = useId();

  if (answer.isSuccess) return <ReturnToLms answer={answer.data} platformName={request.platformName} />;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (problem) {
      setTriedToSend(true);
      return;
    }
    answer.mutate({ labIds: chosenInCatalogOrder(request.labs, chosen), postSelfChecks });
  };
  const gone = answer.isError && isDeepLinkGone(answer.error);
  const inputType = request.acceptMultiple ? "checkbox" : "radio";

  return (
    <form className="lti-picker" onSubmit={submit} noValidate>
      <fieldset className="lti-choices">
        <legend className="section-title">
          {request.acceptMultiple ? t("lti.deepLink.chooseLabs") : t("lti.deepLink.chooseLab")}
        </legend>
        {labs.length === 0 && <p className="empty">{t("lti.deepLink.noLabs")}</p>}
        {labs.map((lab) => {
          const inputId = `lti-lab-${lab.id}`;
          return (
            <div key={lab.id} className="card lti-choice" data-checked={chosen.includes(lab.id)}>
              <div className="lti-choice-title">
                <input
                  id={inputId}
                  type={inputType}
                  name="lab"
                  value={lab.id}
                  checked={chosen.includes(lab.id)}
                  aria-describedby={lab.description ? `${inputId}-description` : undefined}
                  onChange={(event) =>
                    setChosen((current) =>
                      toggleLab(current, lab.id, event.target.checked, request.acceptMultiple),
                    )
                  }
                />
                <label htmlFor={inputId}>
                  <LangText text={lab.title} />
                </label>
              </div>
              {lab.description && (
                <div id={`${inputId}-description`} className="lti-choice-description">
                  {renderDescription(lab.description)}
                </div>
              )}
            </div>
          );
        })}
      </fieldset>
      <div className="lti-self-checks">
        <input
          id="lti-post-self-checks"
          type="checkbox"
          checked={postSelfChecks}
          aria-describedby={selfCheckHintId}
          onChange={(event) => setPostSelfChecks(event.target.checked)}
        />
        <label htmlFor="lti-post-self-checks">{t("lti.deepLink.postSelfChecks")}</label>
        <p id={selfCheckHintId} className="muted small">
          {t("lti.deepLink.postSelfChecksHint")}
        </p>
      </div>
      <div aria-live="polite">
        {triedToSend && problem && (
          <p className="notice notice-error" role="alert">
            {problem === "too-many"
              ? t("lti.deepLink.tooMany", { max: maxLabsPerAnswer })
              : request.acceptMultiple
                ? t("lti.deepLink.noneChosen")
                : t("lti.deepLink.noneChosenOne")}
          </p>
        )}
        {gone && <DeepLinkGone platformName={request.platformName} />}
        {answer.isError && !gone && (
          <p className="notice notice-error" role="alert">
            <ErrorText error={answer.error} />
          </p>
        )}
      </div>
      <div className="card-actions">
        <button type="submit" className="button button-primary" disabled={answer.isPending || gone}>
          {answer.isPending ? t("lti.deepLink.adding") : t("lti.deepLink.add")}
        </button>
        {chosen.length > 0 && (
          <span className="muted">{t("lti.deepLink.chosenCount", { count: chosen.length })}</span>
        )}
      </div>
    </form>
  );
}

/**
 * Hands the signed answer to the LMS: the browser goes to the BFF's page that posts it there (this
 * page may post forms only to its own origin). Once: a second post of the same answer would ask the
 * LMS to add the labs twice, and the BFF's page works once anyway.
 */
function ReturnToLms({ answer, platformName }: { answer: LtiDeepLinkAnswer; platformName: string }) {
  const gone = useRef(false);
  useEffect(() => {
    if (gone.current) return;
    gone.current = true;
    window.location.assign(answer.answerUrl);
  }, [answer.answerUrl]);
  return (
    <div className="panel lti-return">
      <p role="status">
        <Trans
          i18nKey="lti.deepLink.returning"
          components={{ platform: <span translate="no">{platformName}</span> }}
        />
      </p>
    </div>
  );
}
