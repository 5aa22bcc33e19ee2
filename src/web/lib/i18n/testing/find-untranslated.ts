// Finds UI text written straight into a component instead of taken from the catalogs: JSX text, and
// string literals that reach the page through JSX (a child expression, a text attribute such as
// aria-label, a branch of a ternary). Strings without a letter ("—", " · ") are not text.
import ts from "typescript";

export interface Finding {
  line: number;
  text: string;
}

/** Attributes and props whose value people read or hear. */
const textAttribute =
  /^(aria-label|aria-description|aria-placeholder|aria-roledescription|aria-valuetext|title|placeholder|alt|label|summary)$|(Label|Title|Text|Message|Description)$/;
const letter = /\p{L}/u;

export function findUntranslated(fileName: string, source: string): Finding[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const findings: Finding[] = [];
  const report = (node: ts.Node, text: string) => {
    if (!letter.test(text)) return;
    const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
    findings.push({ line: line + 1, text: text.trim() });
  };

  // The strings an expression can evaluate to, as far as they are written in it.
  const checkOutputs = (expression: ts.Expression): void => {
    if (ts.isStringLiteral(expression) || ts.isNoSubstitutionTemplateLiteral(expression)) {
      report(expression, expression.text);
    } else if (ts.isTemplateExpression(expression)) {
      report(
        expression,
        [expression.head.text, ...expression.templateSpans.map((span) => span.literal.text)].join(" "),
      );
    } else if (ts.isParenthesizedExpression(expression)) {
      checkOutputs(expression.expression);
    } else if (ts.isConditionalExpression(expression)) {
      checkOutputs(expression.whenTrue);
      checkOutputs(expression.whenFalse);
    } else if (ts.isBinaryExpression(expression)) {
      const operator = expression.operatorToken.kind;
      if (operator === ts.SyntaxKind.BarBarToken || operator === ts.SyntaxKind.QuestionQuestionToken) {
        checkOutputs(expression.left);
        checkOutputs(expression.right);
      } else if (operator === ts.SyntaxKind.AmpersandAmpersandToken) {
        checkOutputs(expression.right);
      }
    }
  };

  const visit = (node: ts.Node): void => {
    if (ts.isJsxText(node)) {
      report(node, node.text);
    } else if (ts.isJsxExpression(node) && node.expression && !ts.isJsxAttribute(node.parent)) {
      checkOutputs(node.expression);
    } else if (ts.isJsxAttribute(node) && node.initializer && textAttribute.test(node.name.getText(file))) {
      const value = node.initializer;
      if (ts.isStringLiteral(value)) report(value, value.text);
      else if (ts.isJsxExpression(value) && value.expression) checkOutputs(value.expression);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return findings;
}
